/**
 * The code lists the API validates against (docs/api.md section 2). Static, not the runtime's ICU
 * data: the same release accepts the same codes on every Node version and in the SDK.
 */

/**
 * ISO 4217 currencies with their minor units (the exponent: 2 means 12500 is 125.00): the codes in
 * circulation (funds codes included), and those withdrawn since 2021 (BGN, CUC, HRK, SLL, ZWL) so that
 * earlier invoices can still be recorded. Precious metals, the SDR and the testing and "no
 * currency" codes (XAU, XDR, XTS, XXX, ...) are no money an invoice is paid in: refused.
 */
export const CURRENCY_MINOR_UNITS: Readonly<Record<string, number>> = Object.freeze({
  ...codes(0, 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF'),
  ...codes(3, 'BHD IQD JOD KWD LYD OMR TND'),
  ...codes(4, 'CLF UYW'),
  ...codes(
    2,
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF ' +
      'CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HRK ' +
      'HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR ' +
      'MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP ' +
      'SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ' +
      'ZAR ZMW ZWG ZWL',
  ),
});

/** ISO 3166-1 alpha-2: the 249 officially assigned country codes. */
export const COUNTRY_CODES: ReadonlySet<string> = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
    'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP ' +
    'KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS ' +
    'MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS ' +
    'RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW ' +
    'TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

export function isCurrencyCode(value: string): boolean {
  return Object.hasOwn(CURRENCY_MINOR_UNITS, value);
}

export function isCountryCode(value: string): boolean {
  return COUNTRY_CODES.has(value);
}

/**
 * Calendar dates and instants the API accepts: from 1900-01-01 to 9999-12-31 (UTC). Postgres has
 * no year 0 and the documents write four-digit years; before 1900 is a typo, not an invoice.
 */
export const EARLIEST_DATE = '1900-01-01';
export const LATEST_DATE = '9999-12-31';
const EARLIEST_MS = Date.UTC(1900, 0, 1);
const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A `YYYY-MM-DD` that names a real day within the accepted range. */
export function isCalendarDate(value: string): boolean {
  const at = dayOf(value);
  return at !== null && at >= EARLIEST_MS && at <= LATEST_MS;
}

/** An RFC 3339 date-time (`T` or `t`, `Z` or an offset) whose instant is within the accepted range. */
export function isDateTime(value: string): boolean {
  const m = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/.exec(value);
  if (!m || dayOf(m[1]) === null) return false;
  // A leap second (:60) is refused: no runtime here keeps one.
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4]) > 59) return false;
  if (m[5] !== undefined && (Number(m[5]) > 23 || Number(m[6]) > 59)) return false;
  const at = Date.parse(value.toUpperCase());
  return Number.isFinite(at) && at >= EARLIEST_MS && at <= LATEST_MS;
}

/** The UTC midnight of a `YYYY-MM-DD` that names a real day (not 2026-02-30), else null. */
function dayOf(value: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(0, 0, 0, 0);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date.getTime() : null;
}

function codes(minorUnits: number, list: string): Record<string, number> {
  return Object.fromEntries(list.split(' ').map((code) => [code, minorUnits]));
}
