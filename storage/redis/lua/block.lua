-- block: ARGV = prefix, host, until. Blocks only extend.
local host = ARGV[2]
local hb = redis.call('HGET', P .. 'hb', host)
if not hb or tonumber(ARGV[3]) > tonumber(hb) then
  redis.call('HSET', P .. 'hb', host, ARGV[3])
end
if redis.call('ZSCORE', P .. 'ready', host) then
  redis.call('ZADD', P .. 'ready', ready_score(host), host)
end
return 0
