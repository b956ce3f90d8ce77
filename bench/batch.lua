-- wrk script: batches (SPEC 14) of BENCH_BATCH structured-mode events
-- (default 100), each with 256 bytes of text data and a unique id, to
-- POST /v1/events/evt.bench.shop.order.created.  Reports events/s.
local data = string.rep("b", 256)
local counter = 0
local batch = tonumber(os.getenv("BENCH_BATCH") or "100")
local prefix = "x"
local threads = {}
local parts = {}

function setup(thread)
	thread:set("tid", #threads + 1)
	table.insert(threads, thread)
end

function init(args)
	prefix = (args[1] or tostring(os.time())) .. "-" .. tostring(tid)
	wrk.method = "POST"
	wrk.path = "/v1/events/evt.bench.shop.order.created"
	wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_TOKEN") or "bench-token-0123456789")
	wrk.headers["Content-Type"] = "application/cloudevents-batch+json"
end

function request()
	counter = counter + 1
	for k = 1, batch do
		parts[k] = '{"specversion":"1.0","id":"' .. prefix .. "-" .. counter .. "-" .. k ..
			'","source":"/bench","type":"dev.shop.order.created.v1",' ..
			'"datacontenttype":"text/plain","data":"' .. data .. '"}'
	end
	return wrk.format(nil, nil, nil, "[" .. table.concat(parts, ",", 1, batch) .. "]")
end

function done(summary, latency, requests)
	io.write(string.format("p50_ms=%.2f p99_ms=%.2f rps=%.0f events_per_s=%.0f errors=%d\n",
		latency:percentile(50) / 1000, latency:percentile(99) / 1000,
		summary.requests / (summary.duration / 1e6),
		summary.requests * batch / (summary.duration / 1e6),
		summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end
