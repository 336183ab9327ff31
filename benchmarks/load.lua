-- wrk script for benchmarks/bench_load.py: the request comes from the
-- environment, the result goes to $HX_LOAD_OUT as one JSON object.
-- $HX_LOAD_PATHS (space-separated paths) turns a GET into a mix: each
-- thread's requests go round the paths in turn, each thread from another start.
wrk.method = os.getenv("HX_LOAD_METHOD") or "GET"
wrk.headers["Authorization"] = "Token " .. os.getenv("HX_LOAD_TOKEN")
local body_file = os.getenv("HX_LOAD_BODY_FILE") or ""
if body_file ~= "" then
  local source = assert(io.open(body_file, "rb"))
  wrk.body = source:read("*a")
  source:close()
  wrk.headers["Content-Type"] = os.getenv("HX_LOAD_CONTENT_TYPE")
end

local paths = {}
for path in string.gmatch(os.getenv("HX_LOAD_PATHS") or "", "%S+") do
  paths[#paths + 1] = path
end
turn = 0  -- global: setup() gives each thread its own start

function setup(thread)
  thread:set("turn", turn)
  turn = turn + 1
end

if #paths > 0 then
  function request()
    turn = turn + 1
    return wrk.format(nil, paths[turn % #paths + 1])
  end
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
