-- add: ARGV = prefix, now, n, then n times: url id, host, band, due, record.
-- Queues the URLs the crawl has never seen; returns how many, and
-- publishes on P.."added" when there are any.
local now = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local seq = redis.call('INCRBY', P .. 'seq', n) - n
local added = 0
for i = 0, n - 1 do
  local b = 4 + i * 5
  local urlid, host, band, due = ARGV[b], ARGV[b + 1], tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  seq = seq + 1
  local qscore = fmt(band * 281474976710656 + seq)
  if redis.call('HSETNX', P .. 'st', urlid, 'q|0|' .. qscore .. '|' .. host) == 1 then
    added = added + 1
    redis.call('HSET', P .. 'u', urlid, ARGV[b + 4])
    if due > now then
      redis.call('ZADD', P .. 'dl', ARGV[b + 3], urlid)
    else
      redis.call('ZADD', P .. 'q:' .. host, qscore, urlid)
      redis.call('HINCRBY', P .. 'n', 'q', 1)
      make_ready(host)
    end
  end
end
if added > 0 then
  -- Wakes the waiting queues of every process (see the Queue's listener).
  redis.call('PUBLISH', P .. 'added', '1')
end
return added
