--[[
hxportal_filter.lua: a Slurm cli_filter/lua script that asks hxportal where a
plain sbatch job should run.

Install it as cli_filter.lua next to slurm.conf, set CliFilterPlugins=cli_filter/lua
in slurm.conf and write hxportal_filter.conf beside it (see
hxportal_filter.conf.example and contrib/slurm/README.md). It runs inside each
user's sbatch (not inside slurmctld), as that user.

For an sbatch job in an opted-in partition that gives a node count (-N n) and no
node list (-w), it posts the job to the portal (POST /api/v1/recommendations/),
polls until the answer is ready or the deadline passes (then it takes the
provisional analytic answer if the portal has one), and rewrites the job:

    -N <n + spares> -w <nodelist> --comment=[<comment> ]hxportal-recommendation=<id>
    --export=ALL,HX_RECOMMENDATION=<id>,HX_N_NODE=<n>     (an export list is extended)

Fails open: on any error (no config, portal down, slow or refusing, an answer that
does not make sense, a bug here) the job is submitted as the user wrote it. Each
decision is one line in the log file and in Slurm's log (sbatch's stderr: shown
for opted-in partitions, with -v for the others).

No shell is ever run. Needs Lua 5.1 (Debian's Slurm links liblua5.1) with
lua-socket and lua-cjson; lua-sec for an https:// portal.
]]

local CONFIG_NAME = "hxportal_filter.conf"
local TAG = "hxportal-recommendation="
local MAX_ANSWER = 8 * 1024 * 1024 -- bytes of one portal answer
local MAX_SCRIPT_LINES = 1000 -- #HX lines are read from the top of the script only

local function optional(name)
    local ok, module = pcall(require, name)
    if ok then
        return module
    end
    return nil
end

local socket = optional("socket")
local http = optional("socket.http")
local ltn12 = optional("ltn12")
local cjson = optional("cjson")

local function now()
    if socket then
        return socket.gettime()
    end
    return os.time()
end

local function trim(text)
    return (tostring(text or ""):gsub("^%s+", ""):gsub("%s+$", ""))
end

-- One line of log text: no control characters, no double quotes, bounded.
local function clean(text, limit)
    text = tostring(text or ""):gsub("[%c\"]", " ")
    limit = limit or 300
    if #text > limit then
        text = text:sub(1, limit) .. "..."
    end
    return text
end

----------------------------------------------------------------------- config
local SETTINGS = {
    portalurl = "portal_url", tokenfile = "token_file", machine = "machine",
    partitions = "partitions", defaultpartition = "default_partition",
    timeout = "timeout", pollinterval = "poll_interval", log = "log",
    pattern = "pattern", simulate = "simulate", computefraction = "compute_fraction",
    defaultwalltime = "default_wall_time", pabn = "p_abn", alphaabn = "alpha_abn",
    tbench = "t_bench", cafile = "ca_file",
}
local NUMBERS = {
    timeout = {"Timeout", 0.1, 300}, poll_interval = {"PollInterval", 0.05, 60},
    compute_fraction = {"ComputeFraction", 0.000001, 1}, p_abn = {"PAbn", 0, 1},
    alpha_abn = {"AlphaAbn", 1, 1e9}, t_bench = {"TBench", 0, 1e9},
}
local YES = {yes = true, ["true"] = true, ["1"] = true, on = true}
local NO = {no = true, ["false"] = true, ["0"] = true, off = true}

-- Seconds of a Slurm time ("30", "1:00:00", "2-12"), nil for none or unlimited.
local function slurm_seconds(text)
    text = trim(text)
    if text == "" then
        return nil
    end
    local minutes
    if slurm and slurm.time_str2mins then
        minutes = tonumber(slurm.time_str2mins(text))
    end
    -- Slurm's NO_VAL / INFINITE and errors are out of this range.
    if not minutes or minutes <= 0 or minutes >= 4294967294 then
        return nil
    end
    return minutes * 60
end

local function convert(cfg)
    for field, range in pairs(NUMBERS) do
        if cfg[field] ~= nil then
            local value = tonumber(cfg[field])
            if not value or value < range[2] or value > range[3] then
                return nil, string.format("%s must be a number in [%g, %g]", range[1],
                                          range[2], range[3])
            end
            cfg[field] = value
        end
    end
    local simulate = tostring(cfg.simulate):lower()
    if not (YES[simulate] or NO[simulate]) then
        return nil, "Simulate must be yes or no"
    end
    cfg.simulate = YES[simulate] == true
    local parts = {}
    for name in tostring(cfg.partitions or ""):gmatch("[^,%s]+") do
        parts[name] = true
    end
    cfg.partitions = parts
    if cfg.default_wall_time then
        cfg.default_wall_time = slurm_seconds(cfg.default_wall_time)
        if not cfg.default_wall_time then
            return nil, "DefaultWallTime must be a Slurm time such as 1:00:00"
        end
    end
    return cfg
end

local function check(cfg)
    cfg.portal_url = trim(cfg.portal_url):gsub("/+$", "")
    if not cfg.portal_url:match("^https?://[%w%.%-%[%]:]+[^%s]*$") then
        return nil, "PortalURL must be an http:// or https:// URL"
    end
    if trim(cfg.machine) == "" then
        return nil, "Machine is missing"
    end
    if trim(cfg.token_file) == "" then
        return nil, "TokenFile is missing"
    end
    local problem
    cfg, problem = convert(cfg)
    if cfg and cfg.poll_interval > cfg.timeout then
        cfg.poll_interval = cfg.timeout
    end
    return cfg, problem
end

-- slurm.conf style: Key=Value lines, keys in any case, # starts a comment.
local function read_config(path)
    local handle = io.open(path, "r")
    if not handle then
        return nil, "no " .. path
    end
    local cfg = {timeout = "5", poll_interval = "0.5", pattern = "unknown", simulate = "yes"}
    local number = 0
    for line in handle:lines() do
        number = number + 1
        line = trim(line:gsub("#.*$", ""))
        if line ~= "" then
            local key, value = line:match("^([%w_]+)%s*=%s*(.-)$")
            local field = key and SETTINGS[key:lower()]
            if not field then
                handle:close()
                return nil, string.format("%s line %d: unknown setting", path, number)
            end
            cfg[field] = value
        end
    end
    handle:close()
    return check(cfg)
end

local function config_path()
    -- cli_filter/lua loads this file from slurm.conf's directory: the config is beside it.
    local source = debug.getinfo(1, "S").source
    local dir = source:match("^@(.*)/[^/]*$")
    if not dir then
        local conf = os.getenv("SLURM_CONF") or "/etc/slurm/slurm.conf"
        dir = conf:match("^(.*)/[^/]*$") or "."
    end
    return dir .. "/" .. CONFIG_NAME
end

----------------------------------------------------------------------- the job
-- The submitting user's name from /etc/passwd (read, not run), else $USER.
local function user_name(options)
    local uid = tostring(options.uid or "")
    local handle = uid:match("^%d+$") and io.open("/etc/passwd", "r")
    if handle then
        for line in handle:lines() do
            local name, id = line:match("^([^:]+):[^:]*:(%d+):")
            if id == uid then
                handle:close()
                return name
            end
        end
        handle:close()
    end
    return os.getenv("USER") or os.getenv("LOGNAME") or ("uid" .. uid)
end

-- A path from the config with ~ (the user's home) and %u (the user name) filled in.
local function personal_path(path, user)
    path = path:gsub("%%u", (user:gsub("%%", "%%%%")))
    local home = os.getenv("HOME")
    if home and path:sub(1, 2) == "~/" then
        path = home .. path:sub(2)
    end
    return path
end

local function read_token(cfg, user)
    local path = personal_path(cfg.token_file, user)
    local handle = io.open(path, "r")
    if not handle then
        return nil, "cannot read the token file " .. path
    end
    local token = trim(handle:read("*l"))
    handle:close()
    if token == "" or token:find("[%s%c]") then
        return nil, "no token in " .. path
    end
    return token
end

local HX_OPTIONS = {["--pattern"] = "pattern", ["--t-cmpt"] = "t_cmpt",
                    ["--t-comm"] = "t_comm", ["--compute-fraction"] = "compute_fraction"}

-- "#HX --pattern stencil4 --t-cmpt 300" lines at the top of the batch script (as
-- hx-sbatch reads them): read with io.open, never through a shell.
local function script_directives(path)
    local out = {}
    -- not a device or a named pipe there (opening one could block)
    local handle = path and not path:match("^/dev/") and not path:match("^/proc/")
        and io.open(path, "r")
    if not handle then
        return out
    end
    local tokens, number = {}, 0
    for line in handle:lines() do
        number = number + 1
        local text = trim(line)
        if number > MAX_SCRIPT_LINES then
            break
        end
        if not (number == 1 and text:sub(1, 2) == "#!") and text ~= "" then
            if text:sub(1, 1) ~= "#" then
                break -- sbatch stops reading options at the first command
            end
            local rest = text:match("^#HX%s+(.*)$")
            for token in (rest or ""):gmatch("%S+") do
                tokens[#tokens + 1] = token
            end
        end
    end
    handle:close()
    local i = 1
    while i <= #tokens do
        local name, value = tokens[i]:match("^(%-%-[%w%-]+)=(.*)$")
        name = name or tokens[i]
        if name == "--hx-off" then
            out.off = true
        elseif HX_OPTIONS[name] then
            if not value then
                i = i + 1
                value = tokens[i]
            end
            out[HX_OPTIONS[name]] = value
        end
        i = i + 1
    end
    return out
end

local function decode(text)
    local ok, value = pcall(cjson.decode, text)
    if ok then
        return value
    end
    return nil
end

local function absent(value)
    return value == nil or (cjson and value == cjson.null)
end

-- What the user asked for: the options sbatch has set (command line, #SBATCH lines
-- and SBATCH_* variables), as slurm.json_cli_options lists them.
local function job_request(options)
    local set = decode(slurm.json_cli_options(options) or "") or {}
    local script = type(set.argv) == "table" and set.argv[1] or nil
    local name = set["job-name"]
    if absent(name) then
        name = (script and script:match("([^/]+)$")) or (absent(set.wrap) and "sbatch")
            or "wrap"
    end
    return set, script, (tostring(name):gsub("%c", " "))
end

-- The question for the portal, or nil and why the job stays as it is.
local function question(cfg, set, script, name, partition)
    if not cfg.partitions[partition] then
        return nil, "partition " .. partition .. " is not opted in"
    end
    local disable = os.getenv("HX_DISABLE") or ""
    if disable ~= "" and disable ~= "0" then
        return nil, "HX_DISABLE is set"
    end
    for _, key in ipairs({"nodelist", "exclude", "constraint", "switches", "array"}) do
        if not absent(set[key]) then
            return nil, "the job gives --" .. key
        end
    end
    local nodes = tostring(set.nodes or "")
    if not nodes:match("^%d+$") or tonumber(nodes) < 1 then
        return nil, "no single node count (-N " .. (nodes ~= "" and nodes or "missing") .. ")"
    end
    local hx = script_directives(script)
    if hx.off then
        return nil, "#HX --hx-off in the script"
    end
    local body = {machine = cfg.machine, node_count = tonumber(nodes), name = name:sub(1, 128),
                  pattern = hx.pattern or os.getenv("HX_PATTERN") or cfg.pattern,
                  simulate = cfg.simulate, p_abn = cfg.p_abn, alpha_abn = cfg.alpha_abn,
                  t_bench = cfg.t_bench}
    if hx.t_cmpt then
        body.t_cmpt, body.t_comm = tonumber(hx.t_cmpt), tonumber(hx.t_comm or 0)
        if not body.t_cmpt or not body.t_comm then
            return nil, "#HX --t-cmpt/--t-comm are not numbers"
        end
        return body
    end
    body.wall_time = slurm_seconds(set.time) or cfg.default_wall_time
    if not body.wall_time then
        return nil, "no time limit (-t) and no DefaultWallTime"
    end
    body.compute_fraction = tonumber(hx.compute_fraction) or cfg.compute_fraction
    return body
end

----------------------------------------------------------------------- portal
-- A socket whose every call ends by the deadline: LuaSocket's timeouts are per
-- call, so each call gets what is left of the whole conversation.
local function bounded(create, deadline, check_peer)
    return function()
        local inner, err = create()
        if not inner then
            return nil, err
        end
        local proxy = {}
        local function call(name, ...)
            local left = deadline - now()
            if left <= 0 then
                return nil, "timeout"
            end
            inner:settimeout(left, "t")
            return inner[name](inner, ...)
        end
        function proxy.settimeout()
            return 1
        end
        function proxy.connect(_, host, port)
            local ok, problem = call("connect", host, port)
            if ok and check_peer then
                ok, problem = check_peer(inner, host)
            end
            return ok, problem
        end
        function proxy.send(_, ...)
            return call("send", ...)
        end
        function proxy.receive(_, ...)
            return call("receive", ...)
        end
        return setmetatable(proxy, {__index = function(_, key)
            local value = inner[key]
            if type(value) == "function" then
                return function(_, ...)
                    return value(inner, ...)
                end
            end
            return value
        end})
    end
end

-- LuaSec checks the chain; the name in the certificate is checked here.
local function host_matches(pattern, host)
    pattern, host = pattern:lower(), host:lower()
    if pattern == host then
        return true
    end
    local suffix = pattern:match("^%*(%..+)$")
    return suffix ~= nil and #host > #suffix and host:sub(-#suffix) == suffix
        and not host:sub(1, #host - #suffix):find("%.")
end

local function check_peer(conn, host)
    local cert = conn.getpeercertificate and conn:getpeercertificate()
    if not cert then
        return nil, "no server certificate"
    end
    local names = {}
    local alt = (cert:extensions() or {})["2.5.29.17"] or {}
    for _, kind in ipairs({"dNSName", "iPAddress"}) do
        for _, name in ipairs(alt[kind] or {}) do
            names[#names + 1] = name
        end
    end
    if #names == 0 then
        for _, entry in ipairs(cert:subject() or {}) do
            if entry.name == "commonName" or entry.oid == "2.5.4.3" then
                names[#names + 1] = entry.value
            end
        end
    end
    for _, name in ipairs(names) do
        if host_matches(name, host) then
            return 1
        end
    end
    return nil, "certificate is not for " .. host
end

local function connector(cfg, deadline)
    if cfg.portal_url:sub(1, 6) ~= "https:" then
        return bounded(socket.tcp, deadline)
    end
    local https = optional("ssl.https")
    if not https then
        return nil, "an https:// portal needs lua-sec"
    end
    https.TIMEOUT = math.max(0.001, deadline - now()) -- the TLS handshake's bound
    local params = {protocol = "any", options = {"all", "no_sslv2", "no_sslv3", "no_tlsv1"},
                    verify = {"peer", "fail_if_no_peer_cert"}}
    if cfg.ca_file then
        params.cafile = cfg.ca_file
    else
        params.capath = "/etc/ssl/certs"
    end
    return bounded(https.tcp(params), deadline, check_peer)
end

-- The portal's errors are {"detail": "field: problem | ...", "errors": {...}}.
local function portal_error(code, data)
    local text = "portal answered " .. tostring(code)
    local detail = type(data) == "table" and data.detail
    if type(detail) == "string" and detail ~= "" then
        text = text .. ": " .. detail
    end
    if code == 301 or code == 302 or code == 308 then
        text = text .. " (a redirect: is PortalURL https://?)"
    end
    return text
end

-- One HTTP exchange with the portal, bounded by the deadline: data or nil, why.
local function call_portal(cfg, token, method, path, payload, deadline)
    if deadline - now() <= 0 then
        return nil, "portal timed out (no time left of Timeout=" .. cfg.timeout .. " s)"
    end
    local create, problem = connector(cfg, deadline)
    if not create then
        return nil, problem
    end
    local body = payload and cjson.encode(payload) or nil
    local chunks, size = {}, 0
    local function sink(chunk)
        if chunk then
            size = size + #chunk
            if size > MAX_ANSWER then
                return nil, "answer too large"
            end
            chunks[#chunks + 1] = chunk
        end
        return 1
    end
    local headers = {authorization = "Token " .. token, accept = "application/json",
                     ["user-agent"] = "hxportal-cli-filter"}
    if body then
        headers["content-type"] = "application/json"
        headers["content-length"] = tostring(#body)
    end
    local timed_out = "no answer within Timeout=" .. cfg.timeout .. " s"
    local ok, code = http.request({
        url = cfg.portal_url .. "/api/v1/" .. path, method = method, headers = headers,
        source = body and ltn12.source.string(body) or nil, sink = sink, create = create,
        redirect = false})
    if not ok then
        if code == "timeout" or deadline - now() <= 0 then
            return nil, "portal timed out (" .. timed_out .. ")"
        end
        return nil, "portal unreachable (" .. tostring(code) .. ")"
    end
    if code == 408 and deadline - now() <= 0 then -- LuaSocket's code for a silent server
        return nil, "portal timed out (" .. timed_out .. ")"
    end
    local data = decode(table.concat(chunks))
    if code ~= 200 and code ~= 201 and code ~= 202 then
        return nil, portal_error(code, data)
    end
    if type(data) ~= "table" then
        return nil, "portal answered " .. tostring(code) .. " without JSON"
    end
    return data
end

local function usable(rec, node_count)
    local best = type(rec) == "table" and rec.recommended
    if type(best) ~= "table" then
        return nil
    end
    local total, list = tonumber(best.n_total), best.nodelist
    if not total or total < node_count or total % 1 ~= 0 or type(list) ~= "string"
        or not list:match("^[%w%.%-_%[%],]+$") or not tonumber(rec.id) then
        return nil
    end
    return {id = tostring(rec.id), n_total = total, nodelist = list, policy = best.policy,
            n_spare = best.n_spare}
end

-- Ask and poll until ready or the deadline: the answer and how it was reached.
local function ask(cfg, token, body, deadline)
    local rec, problem = call_portal(cfg, token, "POST", "recommendations/", body, deadline)
    if not rec then
        return nil, problem
    end
    while rec.status == "computing" do
        local left = deadline - now()
        local answer = usable(rec, body.node_count)
        if left <= cfg.poll_interval then
            if answer then
                return answer, "provisional answer (not ready within " .. cfg.timeout .. " s)"
            end
            return nil, "recommendation " .. tostring(rec.id) .. " not ready within "
                .. cfg.timeout .. " s"
        end
        socket.sleep(cfg.poll_interval)
        local again
        again, problem = call_portal(cfg, token, "GET", "recommendations/" .. rec.id .. "/",
                                     nil, deadline)
        if not again then
            -- a poll's socket waits at most until the deadline: its timing out is the
            -- Timeout running out, i.e. the portal not ready in time
            if problem:find("^portal timed out") then
                local late = "not ready within " .. cfg.timeout .. " s"
                if answer then
                    return answer, "provisional answer (" .. late .. ")"
                end
                return nil, "recommendation " .. tostring(rec.id) .. " " .. late
            end
            if answer then
                return answer, "provisional answer (" .. problem .. " while polling)"
            end
            return nil, problem
        end
        rec = again
    end
    local answer = usable(rec, body.node_count)
    if not answer then
        return nil, "recommendation " .. tostring(rec.id) .. " is " .. tostring(rec.status)
            .. " without a usable answer"
    end
    return answer, "recommendation " .. tostring(rec.status)
end

----------------------------------------------------------------------- rewrite
-- hx-sbatch's rule: no --export means ALL; NONE becomes just ours; a list grows.
local function merged_export(existing, extra)
    if absent(existing) or existing == "" then
        return "ALL," .. extra
    end
    if tostring(existing):upper() == "NONE" then
        return extra
    end
    return tostring(existing) .. "," .. extra
end

-- Set the options; on a refusal put back what can be put back and say so.
local function apply(options, set, body, answer)
    local ntasks = tonumber(set.ntasks)
    if ntasks and ntasks < answer.n_total then
        return nil, string.format("--ntasks %d is below the %d nodes with spares", ntasks,
                                  answer.n_total)
    end
    local comment = absent(set.comment) and "" or (tostring(set.comment) .. " ")
    local wanted = {
        {"comment", comment .. TAG .. answer.id},
        {"export", merged_export(set.export, "HX_RECOMMENDATION=" .. answer.id
                                 .. ",HX_N_NODE=" .. body.node_count)},
        {"nodes", tostring(answer.n_total)},
        {"nodelist", answer.nodelist},
    }
    local before = {comment = "", export = "ALL"}
    for index, pair in ipairs(wanted) do
        options[pair[1]] = pair[2]
        if options[pair[1]] ~= pair[2] then
            for back = index - 1, 1, -1 do -- nodelist is last: it is never put back
                local key = wanted[back][1]
                options[key] = absent(set[key]) and before[key] or tostring(set[key])
            end
            return nil, "sbatch refused --" .. pair[1] .. "=" .. pair[2]
        end
    end
    return true
end

----------------------------------------------------------------------- logging
local function write_log(cfg, user, line)
    if not (cfg and cfg.log) then
        return
    end
    local path = personal_path(cfg.log, user)
    local handle = io.open(path, "a")
    if not handle then
        slurm.log_verbose("hxportal: cannot append to %s", path)
        return
    end
    handle:write(os.date("!%Y-%m-%dT%H:%M:%SZ"), " ", line, "\n")
    handle:close()
end

local function log_decision(cfg, d, started)
    local line = string.format('job="%s" user=%s partition=%s decision=%s reason="%s" '
                               .. 'elapsed=%.3fs', clean(d.job, 128), clean(d.user, 64),
                               clean(d.partition or "-", 64), d.decision, clean(d.reason),
                               now() - started)
    if d.quiet then
        slurm.log_verbose("hxportal: %s", line)
    else
        slurm.log_info("hxportal: %s", line)
    end
    write_log(cfg, d.user, line)
end

----------------------------------------------------------------------- decide
local function decide(options, d)
    if not (socket and http and ltn12 and cjson) then
        return nil, "lua-socket or lua-cjson is not installed"
    end
    local cfg, problem = read_config(config_path())
    d.cfg = cfg
    if not cfg then
        d.quiet = problem:sub(1, 3) == "no "
        return nil, "config: " .. problem
    end
    local set, script, name = job_request(options)
    d.job = name
    local partition = set.partition
    if absent(partition) then
        partition = cfg.default_partition
    end
    d.partition = partition and tostring(partition) or nil
    if not d.partition then
        d.quiet = true
        return nil, "no partition (-p) and no DefaultPartition"
    end
    local body
    body, problem = question(cfg, set, script, name, d.partition)
    if not body then
        d.quiet = not cfg.partitions[d.partition]
        return nil, problem
    end
    local token
    token, problem = read_token(cfg, d.user)
    if not token then
        return nil, problem
    end
    local answer, how = ask(cfg, token, body, d.started + cfg.timeout)
    if not answer then
        return nil, how
    end
    local ok
    ok, problem = apply(options, set, body, answer)
    if not ok then
        return nil, problem
    end
    d.provisional = how:find("^provisional") ~= nil
    return string.format("recommendation %s: %s, %s spare(s), -N %d -w %s (%s)", answer.id,
                         tostring(answer.policy), tostring(answer.n_spare), answer.n_total,
                         answer.nodelist, how)
end

----------------------------------------------------------------------- Slurm's entry points
function slurm_cli_setup_defaults(_options, _early_pass)
    return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
    -- srun and salloc pass here too (srun once per job step): only sbatch is asked about.
    if options.type ~= "sbatch" or offset ~= 0 then
        return slurm.SUCCESS
    end
    local d = {started = now(), job = "sbatch", user = "?"}
    local ran, result, problem = pcall(function()
        d.user = user_name(options)
        return decide(options, d)
    end)
    if not ran then
        result, problem = nil, "filter error: " .. tostring(result)
    end
    if result then
        d.decision, d.reason = d.provisional and "provisional" or "rewritten", result
    else
        d.decision, d.reason = "unchanged", problem
    end
    pcall(log_decision, d.cfg, d, d.started)
    return slurm.SUCCESS
end

function slurm_cli_post_submit(_offset, _job_id, _step_id)
    return slurm.SUCCESS
end
