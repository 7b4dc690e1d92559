-- Shared helpers of the queue scripts. ARGV[1] is the crawl's key prefix.
--
-- Numbers: times are microseconds since the Unix epoch and queue scores are
-- band * 2^48 + seq, all integers below 2^53, exact in Lua's doubles. They
-- become strings only through fmt (string.format "%.0f"), never through
-- Lua's own tostring, which keeps 14 digits.
--
-- Keys (P is the prefix):
--   P.."st"    hash  url id -> "code|settled lease|queue score|host"; code is
--                    q (queued or delayed), l (leased), d (done), f (failed)
--   P.."u"     hash  url id -> record (url, host, depth, ...), for unfinished URLs
--   P.."q:"..h zset  a host's due URLs by queue score
--   P.."dl"    zset  delayed URLs (retries, recrawls, NotBefore) by due time
--   P.."ready" zset  hosts with due URLs and no lease, by the time they may be contacted
--   P.."hp"    hash  host -> politeness time; P.."hb" host -> blocked until;
--   P.."hd"    hash  host -> delay after an expired lease
--   P.."hl"    hash  host -> its lease id
--   P.."ls"    zset  lease id -> expiry; P.."lr" hash lease id -> "url id|queue score|host"
--   P.."seq", P.."lseq" counters; P.."n" hash of counts (q: URLs in host queues)
local P = ARGV[1]

local function fmt(x)
  return string.format('%.0f', x)
end

local function num(v, d)
  if v then
    return tonumber(v)
  end
  return d
end

local function parse_state(s)
  return string.match(s, '^(%a)|(%d+)|(%d+)|(.*)$')
end

local function parse_lease(rec)
  return string.match(rec, '^([^|]*)|([^|]*)|(.*)$')
end

-- ready_score is when host may be contacted: its politeness time or its
-- block, whichever is later.
local function ready_score(host)
  local hp = num(redis.call('HGET', P .. 'hp', host), 0)
  local hb = num(redis.call('HGET', P .. 'hb', host), 0)
  if hb > hp then
    return hb
  end
  return hp
end

-- make_ready puts an unleased host with due URLs in the ready set.
local function make_ready(host)
  if redis.call('HEXISTS', P .. 'hl', host) == 0 then
    redis.call('ZADD', P .. 'ready', 'NX', ready_score(host), host)
  end
end

-- expire returns the URL of lease id (record rec, expiry le) to its host's
-- queue; the host may be contacted again le plus its expiry delay.
local function expire(id, rec, le, default_delay)
  local urlid, qscore, host = parse_lease(rec)
  redis.call('ZREM', P .. 'ls', id)
  redis.call('HDEL', P .. 'lr', id)
  redis.call('ZADD', P .. 'q:' .. host, qscore, urlid)
  redis.call('HINCRBY', P .. 'n', 'q', 1)
  local st = redis.call('HGET', P .. 'st', urlid)
  local settled = '0'
  if st then
    local _
    _, settled = parse_state(st)
  end
  redis.call('HSET', P .. 'st', urlid, 'q|' .. settled .. '|' .. qscore .. '|' .. host)
  if redis.call('HGET', P .. 'hl', host) == id then
    redis.call('HDEL', P .. 'hl', host)
  end
  local hd = num(redis.call('HGET', P .. 'hd', host), default_delay)
  redis.call('HSET', P .. 'hp', host, fmt(le + hd))
  make_ready(host)
end
