-- Checks the simhash version of the crawl's fingerprints. ARGV[1] is the
-- crawl's key prefix P, ARGV[2] this build's simhash.Version. P.."fpv"
-- holds the version of the fingerprint sets P.."fp:00" .. P.."fp:ff"; a
-- crawl without it holds version 1, if any. When the version is not
-- ARGV[2], the script deletes the sets and records ARGV[2], atomically, so
-- that processes opening the crawl at once delete them once. It returns
-- the version it found other than ARGV[2] (0: none, or no fingerprints and
-- no record).
local P, want = ARGV[1], ARGV[2]
local vkey = P .. 'fpv'
local v = redis.call('GET', vkey)
if v == want then
  return 0
end
local stored = 0
if v then
  stored = tonumber(v)
  if not stored or stored < 1 or stored ~= math.floor(stored) then
    return redis.error_reply('malformed fingerprint version ' .. v)
  end
  if stored == tonumber(want) then
    return 0
  end
end
local sets = {}
for i = 0, 255 do
  sets[#sets + 1] = P .. string.format('fp:%02x', i)
end
if stored == 0 and redis.call('EXISTS', unpack(sets)) > 0 then
  stored = 1
end
if stored ~= 0 then
  redis.call('UNLINK', unpack(sets))
end
redis.call('SET', vkey, want)
return stored
