-- wrk script: binary-mode CloudEvents with a unique ce-id per request and a
-- 256-byte body, to POST /v1/events/evt.bench.shop.order.created.
local body = string.rep("b", 256)
local counter = 0
local prefix = "x"
local threads = {}

function setup(thread)
	thread:set("tid", #threads + 1)
	table.insert(threads, thread)
end

function init(args)
	prefix = (args[1] or tostring(os.time())) .. "-" .. tostring(tid)
	wrk.method = "POST"
	wrk.path = "/v1/events/evt.bench.shop.order.created"
	wrk.body = body
	wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_TOKEN") or "bench-token-0123456789")
	wrk.headers["ce-specversion"] = "1.0"
	wrk.headers["ce-source"] = "/bench"
	wrk.headers["ce-type"] = "dev.shop.order.created.v1"
	wrk.headers["Content-Type"] = "application/octet-stream"
end

function request()
	counter = counter + 1
	wrk.headers["ce-id"] = prefix .. "-" .. counter
	return wrk.format()
end

local statuses = {}
function response(status, headers, body)
	statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
	io.write(string.format("p50_ms=%.2f p99_ms=%.2f rps=%.0f errors=%d non2xx_hint=see_status\n",
		latency:percentile(50) / 1000, latency:percentile(99) / 1000,
		summary.requests / (summary.duration / 1e6),
		summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end
