-- scan: KEYS = sorted set of keys, hash of values; ARGV = lex min, lex max,
-- limit. Returns key, value, key, value, ... in key order, read atomically.
local ks = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'BYLEX', 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
local i = 1
while i <= #ks do
  local j = math.min(i + 999, #ks)
  local vs = redis.call('HMGET', KEYS[2], unpack(ks, i, j))
  for k = i, j do
    table.insert(out, ks[k])
    table.insert(out, vs[k - i + 1] or '')
  end
  i = j + 1
end
return out
