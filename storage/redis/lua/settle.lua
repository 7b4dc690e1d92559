-- settle: ARGV = prefix, now, default expiry delay, n, then n times: lease
-- id, url id, code (q, d or f), due, record, politeness time, expiry delay.
-- Returns one code per lease: 0 when settled, 1 when the lease is no longer
-- valid (expired), 2 when this lease had settled the URL already.
local now = tonumber(ARGV[2])
local default_delay = tonumber(ARGV[3])
local n = tonumber(ARGV[4])

local function settle(id, urlid, code, due, rec_blob, polite, delay)
  local rec = redis.call('HGET', P .. 'lr', id)
  if not rec then
    local st = redis.call('HGET', P .. 'st', urlid)
    if st then
      local _, settled = parse_state(st)
      if settled == id then
        return 2
      end
    end
    return 1
  end
  local lurl, qscore, host = parse_lease(rec)
  if lurl ~= urlid then
    return 1
  end
  local le = tonumber(redis.call('ZSCORE', P .. 'ls', id))
  if le <= now then
    expire(id, rec, le, default_delay)
    return 1
  end
  redis.call('ZREM', P .. 'ls', id)
  redis.call('HDEL', P .. 'lr', id)
  redis.call('HDEL', P .. 'hl', host)
  redis.call('HSET', P .. 'hp', host, polite)
  redis.call('HSET', P .. 'hd', host, delay)
  redis.call('HSET', P .. 'st', urlid, code .. '|' .. id .. '|' .. qscore .. '|' .. host)
  if code == 'q' then
    redis.call('HSET', P .. 'u', urlid, rec_blob)
    if tonumber(due) <= now then
      redis.call('ZADD', P .. 'q:' .. host, qscore, urlid)
      redis.call('HINCRBY', P .. 'n', 'q', 1)
    else
      redis.call('ZADD', P .. 'dl', due, urlid)
    end
  else
    redis.call('HDEL', P .. 'u', urlid)
  end
  if redis.call('ZCARD', P .. 'q:' .. host) > 0 then
    redis.call('ZADD', P .. 'ready', ready_score(host), host)
  end
  return 0
end

local out = {}
for i = 0, n - 1 do
  local b = 5 + i * 7
  out[i + 1] = settle(ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5], ARGV[b + 6])
end
return out
