-- extend: ARGV = prefix, now, lease id, new expiry, url id. Returns 0; 1 when
-- the lease is no longer valid (it expired); 2 when this lease had settled
-- the URL already.
local le = redis.call('ZSCORE', P .. 'ls', ARGV[3])
if not le or tonumber(le) <= tonumber(ARGV[2]) or not redis.call('HGET', P .. 'lr', ARGV[3]) then
  local st = redis.call('HGET', P .. 'st', ARGV[5])
  if st then
    local _, settled = parse_state(st)
    if settled == ARGV[3] then
      return 2
    end
  end
  return 1
end
redis.call('ZADD', P .. 'ls', ARGV[4], ARGV[3])
return 0
