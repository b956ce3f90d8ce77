// The live tests' W3C Trace Context check (t-trace.sh): OpenTelemetry's
// propagator, a widely used and strict reader of traceparent, reads the
// headers each attempt carried, as gate-receiver.py logged them.
//
//   node check.js LOG PATH TRACEPARENT TRACESTATE|-
//
// Every request to PATH in LOG must carry a traceparent the propagator
// accepts, with the producer's trace id and flags, a span id of its own
// (not the producer's, not another attempt's), and the producer's
// tracestate unchanged.  With TRACEPARENT "-": no request to PATH carries
// one.  Prints "ok N" or "FAIL why", and exits 0 or 1.
"use strict";
const fs = require("fs");
const api = require("@opentelemetry/api");
const { W3CTraceContextPropagator } = require("@opentelemetry/core");

const [log, path, tp, ts] = process.argv.slice(2);
const prop = new W3CTraceContextPropagator();
const getter = {
	keys: (c) => Object.keys(c),
	get: (c, k) => c[k],
};
const read = (headers) =>
	api.trace.getSpanContext(prop.extract(api.ROOT_CONTEXT, headers, getter));

const recs = fs.readFileSync(log, "utf8").split("\n").filter(Boolean)
	.map((l) => JSON.parse(l)).filter((r) => r.path === path);
function fail(why) {
	console.log("FAIL " + why);
	process.exit(1);
}
if (recs.length === 0)
	fail("no request to " + path);
if (tp === "-") {
	const with_ = recs.filter((r) => r.traceparent !== null);
	if (with_.length > 0)
		fail("a traceparent was invented: " + with_[0].traceparent);
	console.log("ok " + recs.length);
	process.exit(0);
}
const want = read({ traceparent: tp, tracestate: ts === "-" ? undefined : ts });
if (!want)
	fail("the producer's traceparent is not one: " + tp);
const spans = new Set([want.spanId]);
for (const r of recs) {
	const got = read({ traceparent: r.traceparent || undefined,
	    tracestate: r.tracestate || undefined });
	if (!got)
		fail("not a valid traceparent: " + r.traceparent);
	if (got.traceId !== want.traceId)
		fail("trace id " + got.traceId + ", not " + want.traceId);
	if (got.traceFlags !== want.traceFlags)
		fail("flags " + got.traceFlags + ", not " + want.traceFlags);
	if (spans.has(got.spanId))
		fail("span id " + got.spanId + " used twice, or the producer's");
	spans.add(got.spanId);
	const state = got.traceState ? got.traceState.serialize() : "-";
	const wstate = want.traceState ? want.traceState.serialize() : "-";
	if (state !== wstate)
		fail("tracestate [" + state + "], not [" + wstate + "]");
}
console.log("ok " + recs.length);
