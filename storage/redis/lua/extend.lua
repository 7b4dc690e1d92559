-- extend: ARGV = prefix, now, lease id, new expiry. Returns 0, or 1 when the
-- lease is no longer valid.
local le = redis.call('ZSCORE', P .. 'ls', ARGV[3])
if not le or tonumber(le) <= tonumber(ARGV[2]) or not redis.call('HGET', P .. 'lr', ARGV[3]) then
  return 1
end
redis.call('ZADD', P .. 'ls', ARGV[4], ARGV[3])
return 0
