/**
 * Lua scripts run atomically by Redis. All sessions of one API key live in ONE hash,
 * `sess:{<api key uuid>}`, and its pending revocation events in `pend:{<api key uuid>}`: the braces
 * are a Redis Cluster hash tag, so every key a script touches is in the same slot and declared in
 * KEYS. Session field `s:<sid>` holds {c: current refresh-token hash, e: its expiry (ms), sc: scope}.
 */

const COLLECT_AND_REVOKE = `
local function revoke_all(sess, pend, now, event_id, reason)
  local org = redis.call('HGET', sess, 'org') or ''
  local cid = redis.call('HGET', sess, 'cid') or ''
  local sids = {}
  local all = redis.call('HGETALL', sess)
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 's:' then
      table.insert(sids, string.sub(all[i], 3))
    end
  end
  redis.call('DEL', sess)
  local ev = cjson.encode({ event_id = event_id, reason = reason, session_ids = sids, revoked_at = now, org = org, cid = cid })
  redis.call('RPUSH', pend, ev)
  redis.call('PEXPIRE', pend, 604800000)
  return ev
end
`;

/** KEYS: sess. ARGV: sid, refresh hash, refresh expiry ms, scope, org uuid, client id, now ms, key ttl ms. */
export const CREATE_SESSION = `
if redis.call('HEXISTS', KEYS[1], 'revoked') == 1 then return 0 end
local now = tonumber(ARGV[7])
if redis.call('HLEN', KEYS[1]) > 256 then
  -- keep the hash bounded for keys that mint many sessions: drop those whose refresh token expired
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 's:' and tonumber(cjson.decode(all[i + 1]).e) <= now then
      redis.call('HDEL', KEYS[1], all[i])
    end
  end
end
redis.call('HSET', KEYS[1], 'org', ARGV[5], 'cid', ARGV[6], 's:' .. ARGV[1], cjson.encode({ c = ARGV[2], e = ARGV[3], sc = ARGV[4] }))
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[8]) then redis.call('PEXPIRE', KEYS[1], ARGV[8]) end
return 1
`;

/**
 * KEYS: sess, pend. ARGV: sid, presented hash, new hash, now ms, new expiry ms, key ttl ms, event id.
 * Returns {'rotated', scope, org, cid} | {'reuse', event json} | {'expired'} | {'invalid'}.
 * Check and write happen in one step, so of N concurrent refreshes with one token exactly one rotates;
 * the others see a spent token, which is reuse.
 */
export const ROTATE_SESSION = `${COLLECT_AND_REVOKE}
local now = tonumber(ARGV[4])
local field = 's:' .. ARGV[1]
local raw = redis.call('HGET', KEYS[1], field)
if not raw then return { 'invalid' } end
local s = cjson.decode(raw)
if s.c ~= ARGV[2] then
  return { 'reuse', revoke_all(KEYS[1], KEYS[2], ARGV[4], ARGV[7], 'refresh_token_reuse') }
end
if tonumber(s.e) <= now then
  redis.call('HDEL', KEYS[1], field)
  return { 'expired' }
end
s.c = ARGV[3]
s.e = ARGV[5]
redis.call('HSET', KEYS[1], field, cjson.encode(s))
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[6]) then redis.call('PEXPIRE', KEYS[1], ARGV[6]) end
return { 'rotated', s.sc, redis.call('HGET', KEYS[1], 'org'), redis.call('HGET', KEYS[1], 'cid') }
`;

/**
 * KEYS: sess, pend. ARGV: now ms, event id, reason, mark key revoked ('1'/'0'), marker ttl ms, org, cid.
 * Revokes every session of the key; with the mark, sessions can no longer be created for it.
 */
export const REVOKE_ALL_SESSIONS = `${COLLECT_AND_REVOKE}
if redis.call('HLEN', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'org', ARGV[6], 'cid', ARGV[7])
end
local ev = revoke_all(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[1], 'revoked', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
return ev
`;
