-- lease: ARGV = prefix, now, n, expires, default expiry delay.
-- Expires overdue leases, moves due delayed URLs to their hosts' queues, then
-- leases the best URL of up to n ready hosts. Returns {expired, next, id,
-- url id, record, ...}: next is "" when something was leased, otherwise the
-- earliest time anything may change ("" if nothing is queued or leased).
local now = ARGV[2]
local n = tonumber(ARGV[3])
local expires = ARGV[4]
local default_delay = tonumber(ARGV[5])

local expired = 0
local over = redis.call('ZRANGE', P .. 'ls', '-inf', now, 'BYSCORE', 'LIMIT', 0, 100, 'WITHSCORES')
for i = 1, #over, 2 do
  local id = over[i]
  local rec = redis.call('HGET', P .. 'lr', id)
  if rec then
    expire(id, rec, tonumber(over[i + 1]), default_delay)
    expired = expired + 1
  else
    redis.call('ZREM', P .. 'ls', id)
  end
end

local due = redis.call('ZRANGE', P .. 'dl', '-inf', now, 'BYSCORE', 'LIMIT', 0, 1000)
for _, urlid in ipairs(due) do
  redis.call('ZREM', P .. 'dl', urlid)
  local st = redis.call('HGET', P .. 'st', urlid)
  if st then
    local code, settled, qscore, host = parse_state(st)
    if code == 'q' then
      redis.call('ZADD', P .. 'q:' .. host, qscore, urlid)
      redis.call('HINCRBY', P .. 'n', 'q', 1)
      make_ready(host)
    end
  end
end

local out = {expired, ''}
local hosts = redis.call('ZRANGE', P .. 'ready', '-inf', now, 'BYSCORE', 'LIMIT', 0, n)
for _, host in ipairs(hosts) do
  redis.call('ZREM', P .. 'ready', host)
  local top = redis.call('ZPOPMIN', P .. 'q:' .. host)
  if #top > 0 then
    local urlid, qscore = top[1], fmt(tonumber(top[2]))
    redis.call('HINCRBY', P .. 'n', 'q', -1)
    local id = fmt(redis.call('INCR', P .. 'lseq'))
    redis.call('ZADD', P .. 'ls', expires, id)
    redis.call('HSET', P .. 'lr', id, urlid .. '|' .. qscore .. '|' .. host)
    redis.call('HSET', P .. 'hl', host, id)
    local _, settled = parse_state(redis.call('HGET', P .. 'st', urlid))
    redis.call('HSET', P .. 'st', urlid, 'l|' .. settled .. '|' .. qscore .. '|' .. host)
    table.insert(out, id)
    table.insert(out, urlid)
    table.insert(out, redis.call('HGET', P .. 'u', urlid) or '')
  end
end

if #out == 2 then
  local best = nil
  for _, k in ipairs({'ready', 'dl', 'ls'}) do
    local first = redis.call('ZRANGE', P .. k, 0, 0, 'WITHSCORES')
    if #first > 0 then
      local s = tonumber(first[2])
      if best == nil or s < best then
        best = s
      end
    end
  end
  if best ~= nil then
    out[2] = fmt(best)
  end
end
return out
