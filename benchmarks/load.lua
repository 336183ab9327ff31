-- wrk script for benchmarks/bench_load.py: the request comes from the
-- environment, the result goes to $HX_LOAD_OUT as one JSON object.
wrk.method = os.getenv("HX_LOAD_METHOD") or "GET"
wrk.headers["Authorization"] = "Token " .. os.getenv("HX_LOAD_TOKEN")
local body_file = os.getenv("HX_LOAD_BODY_FILE") or ""
if body_file ~= "" then
  local source = assert(io.open(body_file, "rb"))
  wrk.body = source:read("*a")
  source:close()
  wrk.headers["Content-Type"] = os.getenv("HX_LOAD_CONTENT_TYPE")
end

function done(summary, latency, requests)
  local errors = summary.errors
  local out = assert(io.open(os.getenv("HX_LOAD_OUT"), "w"))
  out:write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "max_us": %d, ' ..
    '"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, errors.connect, errors.read, errors.write, errors.status, errors.timeout))
  out:close()
end
