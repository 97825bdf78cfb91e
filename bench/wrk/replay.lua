-- Replays a precomputed list of requests round-robin, for wrk (https://github.com/wg/wrk).
--
-- Usage: wrk ... -s bench/wrk/replay.lua URL -- REQUESTS.lua
-- REQUESTS.lua (written by bench/run.py) returns a list of
--   { method = "GET", path = "/b/k?X-Amz-...", headers = { Host = "127.0.0.1:9000", ... },
--     body = "..." | nil, body_file = "/path" | nil, template = true | nil }
-- Signed requests are precomputed because SigV4 needs HMAC-SHA256, which wrk's Lua lacks; S3 accepts
-- a signed request again until it expires, as the real service does. With `template`, every "@@SEQ@@"
-- in path and body becomes a value unique to this thread and request (a new document id per commit).
-- done() prints one line "BENCHJSON {...}" that run.py reads; no response() hook, so wrk stays fast.

local prepared = {}
local templates = {}
local count = 0
local seq = 0
local index = 0
local threads = {}

function setup(thread)
   table.insert(threads, thread)
   thread:set("tid", #threads)
end

local function read_file(path)
   local f = assert(io.open(path, "rb"))
   local data = f:read("*a")
   f:close()
   return data
end

function init(args)
   local spec = dofile(args[1])
   for i, r in ipairs(spec) do
      local body = r.body
      if r.body_file then body = read_file(r.body_file) end
      if r.template then
         templates[i] = { method = r.method, path = r.path, headers = r.headers, body = body }
      else
         prepared[i] = wrk.format(r.method, r.path, r.headers, body)
      end
   end
   count = #spec
   -- Threads start at different points of the list so they do not replay in lockstep.
   index = ((tid or 1) - 1) % count
end

function request()
   index = index % count + 1
   local p = prepared[index]
   if p then return p end
   local t = templates[index]
   seq = seq + 1
   local id = string.format("t%dn%d", tid or 1, seq)
   local path = string.gsub(t.path, "@@SEQ@@", id)
   local body = t.body and string.gsub(t.body, "@@SEQ@@", id) or nil
   return wrk.format(t.method, path, t.headers, body)
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'BENCHJSON {"requests": %d, "duration_us": %d, "bytes": %d, "connect_errors": %d, "read_errors": %d, ' ..
      '"write_errors": %d, "status_errors": %d, "timeouts": %d, "lat_mean_us": %.1f, "lat_p50_us": %d, ' ..
      '"lat_p90_us": %d, "lat_p99_us": %d, "lat_max_us": %d}\n',
      summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
      latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
