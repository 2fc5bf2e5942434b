/**
 * Lua scripts run atomically by Redis. Per API key there are three keys, all with the hash tag
 * `{<api key uuid>}` so that every key a script touches is in one Redis Cluster slot:
 * - `sess:{k}`, a hash: `org`, `cid`, the `revoked` marker, and one field `s:<sid>` per session
 *   holding {c: current refresh-token hash, e: its expiry (ms), sc: scope};
 * - `sexp:{k}`, a sorted set of session ids scored by their refresh token's expiry: it finds expired
 *   sessions and the oldest one in O(log n), so creating and rotating a session costs the same for a
 *   key with 50,000 live sessions as for a fresh one (ADR 0014);
 * - `pend:{k}`, a list of revocation events waiting to be copied into the Postgres outbox;
 * - `rses:{k}:<sid>`, a short-lived marker of one session ended by RFC 7009 revocation, so that
 *   revoking it again (or one of its access tokens) publishes nothing more.
 */

const COLLECT_AND_REVOKE = `
local function revoke_all(sess, sexp, pend, now, event_id, reason, actor)
  local org = redis.call('HGET', sess, 'org') or ''
  local cid = redis.call('HGET', sess, 'cid') or ''
  local sids = {}
  -- HKEYS rather than the sorted set: it also finds sessions written before the set existed.
  -- O(sessions), but only on a revocation, never on issuance.
  local fields = redis.call('HKEYS', sess)
  for i = 1, #fields do
    if string.sub(fields[i], 1, 2) == 's:' then
      sids[#sids + 1] = string.sub(fields[i], 3)
    end
  end
  redis.call('DEL', sess, sexp)
  -- actor: who did it, as a JSON string for the audit log (absent: nil, and the field is left out).
  local who = nil
  if actor and actor ~= '' then who = actor end
  local ev = cjson.encode({ event_id = event_id, reason = reason, session_ids = sids, revoked_at = now, org = org, cid = cid, actor = who })
  redis.call('RPUSH', pend, ev)
  redis.call('PEXPIRE', pend, 604800000)
  return ev
end
`;

/** Expired sessions dropped per call: bounded work per exchange; enough to outpace issuance. */
const EXPIRED_BATCH = 8;

/**
 * KEYS: sess, sexp. ARGV: sid, refresh hash, refresh expiry ms, scope, org uuid, client id, now ms,
 * key ttl ms, most live sessions per key, secret generation the client authenticated against.
 * Returns 0 when the key is revoked or the secret generation is below the key's floor (`mingen`,
 * raised by a roll that ended the old secret: see SET_SECRET_FLOOR), else 1.
 * Past the bound, the session whose refresh token expires first (the least recently used) is evicted:
 * its refresh token stops working; its access tokens live out their hour, as after an expiry.
 */
export const CREATE_SESSION = `
if redis.call('HEXISTS', KEYS[1], 'revoked') == 1 then return 0 end
local floor = redis.call('HGET', KEYS[1], 'mingen')
if floor and tonumber(floor) > tonumber(ARGV[10]) then return 0 end
local now = tonumber(ARGV[7])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, ${EXPIRED_BATCH})
for i = 1, #expired do
  redis.call('HDEL', KEYS[1], 's:' .. expired[i])
  redis.call('ZREM', KEYS[2], expired[i])
end
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[9]) + 1
if over > 0 then
  local evicted = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #evicted, 2 do redis.call('HDEL', KEYS[1], 's:' .. evicted[i]) end
end
redis.call('HSET', KEYS[1], 'org', ARGV[5], 'cid', ARGV[6], 's:' .. ARGV[1], cjson.encode({ c = ARGV[2], e = ARGV[3], sc = ARGV[4] }))
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
-- Both keys outlive the newest refresh token, and no longer.
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[8])
return 1
`;

/**
 * KEYS: sess, sexp, pend. ARGV: sid, presented hash, new hash, now ms, new expiry ms, key ttl ms, event id,
 * actor (JSON, for the audit log of a reuse: the key and the client's address).
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
  return { 'reuse', revoke_all(KEYS[1], KEYS[2], KEYS[3], ARGV[4], ARGV[7], 'refresh_token_reuse', ARGV[8]) }
end
if tonumber(s.e) <= now then
  redis.call('HDEL', KEYS[1], field)
  redis.call('ZREM', KEYS[2], ARGV[1])
  return { 'expired' }
end
s.c = ARGV[3]
s.e = ARGV[5]
redis.call('HSET', KEYS[1], field, cjson.encode(s))
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return { 'rotated', s.sc, redis.call('HGET', KEYS[1], 'org'), redis.call('HGET', KEYS[1], 'cid') }
`;

/**
 * The floor of secret generations that may still open sessions: a session is opened only by a
 * client that authenticated against a key row of at least this generation. Kept at least
 * {@link SECRET_FLOOR_TTL_MS}, longer than any cached key row (30 s) and request can be old.
 */
const RAISE_FLOOR = `
local function raise_floor(sess, generation, ttl)
  local current = redis.call('HGET', sess, 'mingen')
  if not current or tonumber(current) < tonumber(generation) then
    redis.call('HSET', sess, 'mingen', generation)
  end
  if redis.call('PTTL', sess) < tonumber(ttl) then redis.call('PEXPIRE', sess, ttl) end
end
`;

export const SECRET_FLOOR_TTL_MS = 120_000;

/**
 * KEYS: sess, sexp, pend. ARGV: now ms, event id, reason, mark key revoked ('1'/'0'), marker ttl ms,
 * org, cid, secret floor ('' for none), floor ttl ms, actor (JSON for the audit log, '' for none).
 * Revokes every session of the key; with the mark, sessions can no longer be created for it; with a
 * floor, only by clients that authenticated against a secret of that generation or later (a roll
 * with end_sessions: an exchange that checked the old secret before the roll and opens its session
 * after this script would otherwise outlive it).
 */
export const REVOKE_ALL_SESSIONS = `${COLLECT_AND_REVOKE}${RAISE_FLOOR}
-- A hash without sessions may still hold a secret floor (mingen): name the owner whenever it lacks one.
if redis.call('HEXISTS', KEYS[1], 'org') == 0 then
  redis.call('HSET', KEYS[1], 'org', ARGV[6], 'cid', ARGV[7])
end
local ev = revoke_all(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[10])
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[1], 'revoked', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
if ARGV[8] ~= '' then raise_floor(KEYS[1], ARGV[8], ARGV[9]) end
return ev
`;

/** KEYS: sess. ARGV: secret floor, floor ttl ms. A roll that ends the old secret at once (no overlap). */
export const SET_SECRET_FLOOR = `${RAISE_FLOOR}
raise_floor(KEYS[1], ARGV[1], ARGV[2])
return 1
`;

/**
 * KEYS: sess, sexp, pend, revoked-session marker. ARGV: sid, now ms, event id, marker ttl ms,
 * publish even when the session is gone ('1'/'0'), org uuid, client id.
 * Ends ONE session (RFC 7009 revocation): its refresh tokens stop working, and one event naming it is
 * recorded, atomically, as the other scripts do. Returns the event json, or nil when nothing changed.
 *
 * A session that is already gone (expired, evicted, revoked) is revoked again only when asked: an
 * access token may outlive its session (eviction lets it live out its hour), and revoking that token
 * must still reach the resource services. The marker, kept for as long as such an access token can
 * live, makes every repeat a no-op, so a client looping on one token cannot flood the topic.
 */
export const REVOKE_SESSION = `
local existed = redis.call('HDEL', KEYS[1], 's:' .. ARGV[1]) == 1
redis.call('ZREM', KEYS[2], ARGV[1])
if not existed and ARGV[5] ~= '1' then return nil end
if not redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[4], 'NX') then return nil end
local org = redis.call('HGET', KEYS[1], 'org') or ARGV[6]
local cid = redis.call('HGET', KEYS[1], 'cid') or ARGV[7]
local ev = cjson.encode({ event_id = ARGV[3], reason = 'session_revoked', session_ids = { ARGV[1] }, revoked_at = ARGV[2], org = org, cid = cid })
redis.call('RPUSH', KEYS[3], ev)
redis.call('PEXPIRE', KEYS[3], 604800000)
return ev
`;
