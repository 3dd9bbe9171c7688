-- wrk script for benchmarks/frontends-wrk.sh:
--   wrk … -s frontends.lua URL -- matrix MATERIAL LABEL     one notify body, a unique event id per request,
--                                                           the devices of MATERIAL.devices in turn
--   wrk … -s frontends.lua URL -- nextcloud MATERIAL LABEL  batch bodies (one a line), cycled through
--   wrk … -s frontends.lua URL -- gorush MATERIAL LABEL     one gorush body with a @DEVICE@ token, the tokens
--                                                           of MATERIAL.devices in turn (benchmarks/soak.sh)
-- At the end it prints the answers by status ("status 200 N") and how many 200s did not say that every
-- device was delivered ("undelivered N": Matrix "rejected" not empty, Nextcloud "failed" or "unknown",
-- gorush not "success":"ok").

local threads = {}
local count = 0

function setup(thread)
  count = count + 1
  thread:set("tid", count)
  table.insert(threads, thread)
end

local mode, parts, devices, bodies, prefix
local counter = 0
statuses = {}
undelivered = 0

-- Splits a template into its text and its @EVENT@ and @DEVICE@ placeholders, in order.
local function split(template)
  local pieces, at = {}, 1
  while true do
    local first, last, name = template:find("@(%u+)@", at)
    if not first then break end
    table.insert(pieces, template:sub(at, first - 1))
    table.insert(pieces, { name })
    at = last + 1
  end
  table.insert(pieces, template:sub(at))
  return pieces
end

function init(args)
  mode = args[1]
  local file = assert(io.open(args[2], "r"))
  wrk.method = "POST"
  if mode == "matrix" or mode == "gorush" then
    parts = split(file:read("*l"))
    devices = {}
    for line in assert(io.open(args[2] .. ".devices", "r")):lines() do
      if #line > 0 then table.insert(devices, line) end
    end
    wrk.headers["Content-Type"] = "application/json"
  else
    bodies = {}
    for line in file:lines() do
      if #line > 0 then table.insert(bodies, line) end
    end
    wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  end
  counter = tid * 7919  -- threads start at different devices and batches
  file:close()
  prefix = "$" .. args[3] .. "-" .. tostring(tid) .. "-"
end

function request()
  counter = counter + 1
  if parts then
    local values = { EVENT = prefix .. counter, DEVICE = devices[counter % #devices + 1] }
    local out = {}
    for _, part in ipairs(parts) do
      out[#out + 1] = type(part) == "table" and values[part[1]] or part
    end
    return wrk.format(nil, nil, nil, table.concat(out))
  end
  return wrk.format(nil, nil, nil, bodies[counter % #bodies + 1])
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 200 then
    if mode == "matrix" then
      if not body:find('"rejected":[]', 1, true) then undelivered = undelivered + 1 end
    elseif mode == "gorush" then
      if not body:find('"success":"ok"', 1, true) then undelivered = undelivered + 1 end
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
