-- wrk script for benchmarks/frontends-wrk.sh:
--   wrk … -s frontends.lua URL -- matrix MATERIAL LABEL     one notify body, a unique event id per request
--   wrk … -s frontends.lua URL -- nextcloud MATERIAL LABEL  batch bodies (one a line), cycled through
-- At the end it prints the answers by status ("status 200 N") and how many 200s did not say that every
-- device was delivered ("undelivered N": Matrix "rejected" not empty, Nextcloud "failed" or "unknown").

local threads = {}
local count = 0

function setup(thread)
  count = count + 1
  thread:set("tid", count)
  table.insert(threads, thread)
end

local mode, head, middle, tail, bodies, prefix
local counter = 0
statuses = {}
undelivered = 0

function init(args)
  mode = args[1]
  local file = assert(io.open(args[2], "r"))
  wrk.method = "POST"
  if mode == "matrix" then
    local template = file:read("*l")
    local at = assert(template:find("@EVENT@", 1, true))
    -- The template has @EVENT@ twice (event_id and id): split on both.
    local second = assert(template:find("@EVENT@", at + 7, true))
    head = template:sub(1, at - 1)
    middle = template:sub(at + 7, second - 1)
    tail = template:sub(second + 7)
    wrk.headers["Content-Type"] = "application/json"
  else
    bodies = {}
    for line in file:lines() do
      if #line > 0 then table.insert(bodies, line) end
    end
    wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
    counter = tid * 7  -- threads start at different batches
  end
  file:close()
  prefix = "$" .. args[3] .. "-" .. tostring(tid) .. "-"
end

function request()
  counter = counter + 1
  if mode == "matrix" then
    local id = prefix .. counter
    return wrk.format(nil, nil, nil, head .. id .. middle .. id .. tail)
  end
  return wrk.format(nil, nil, nil, bodies[counter % #bodies + 1])
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 200 then
    if mode == "matrix" then
      if not body:find('"rejected":[]', 1, true) then undelivered = undelivered + 1 end
    elseif not (body:find('"failed":0', 1, true) and body:find('"unknown":[]', 1, true)) then
      undelivered = undelivered + 1
    end
  end
end

function done(summary, latency, requests)
  local total, bad = {}, 0
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do total[status] = (total[status] or 0) + n end
    bad = bad + thread:get("undelivered")
  end
  for status, n in pairs(total) do io.write(string.format("status %d %d\n", status, n)) end
  io.write(string.format("undelivered %d\n", bad))
end
