// The client's address (server/http/client-address.ts): the socket's peer unless that peer is a trusted proxy, and
// then X-Forwarded-For read from the right; TOOLSMITH_TRUSTED_PROXIES parsed with errors naming the bad entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addressBucket,
  CLIENT_ADDRESS_HEADER,
  clientAddress,
  isTrusted,
  normalizeAddress,
  parseTrustedProxies,
  requestAddress,
} from '../../server/http/client-address.ts';
import { config } from '../../server/config.ts';

const none = parseTrustedProxies(undefined);
const local = parseTrustedProxies('127.0.0.1');
const chain = parseTrustedProxies(' 127.0.0.1 , 10.0.0.0/8,::1, fd00::/8 ');

test("no trusted proxies: the socket's peer, whatever X-Forwarded-For says", () => {
  assert.deepEqual(parseTrustedProxies('').entries, []);
  assert.equal(clientAddress('203.0.113.5', '198.51.100.1', none), '203.0.113.5');
  assert.equal(clientAddress('127.0.0.1', '198.51.100.1, 198.51.100.2', none), '127.0.0.1');
  assert.equal(clientAddress('::ffff:127.0.0.1', null, none), '127.0.0.1', 'IPv4-mapped peers in their IPv4 form');
  assert.equal(clientAddress(undefined, '198.51.100.1', none), 'unknown');
});

test("an untrusted peer's X-Forwarded-For is ignored, a trusted one's is read", () => {
  assert.equal(clientAddress('127.0.0.2', '198.51.100.1', local), '127.0.0.2');
  assert.equal(clientAddress('127.0.0.1', '198.51.100.1', local), '198.51.100.1');
  assert.equal(clientAddress('::ffff:127.0.0.1', '198.51.100.1', local), '198.51.100.1');
  assert.equal(clientAddress('127.0.0.1', undefined, local), '127.0.0.1', 'no header: the proxy itself');
  assert.equal(
    clientAddress('127.0.0.1', ['198.51.100.7', '198.51.100.8'], local),
    '198.51.100.8',
    'repeated headers are one list',
  );
});

test('X-Forwarded-For is read right to left: the first hop no trusted proxy vouches for is the client', () => {
  // The client wrote "1.1.1.1, 2.2.2.2"; nginx (trusted) appended the real peer 198.51.100.9.
  assert.equal(clientAddress('127.0.0.1', '1.1.1.1, 2.2.2.2, 198.51.100.9', local), '198.51.100.9');
  // Two trusted proxies in a row.
  assert.equal(clientAddress('10.0.0.2', 'spoofed, 198.51.100.9, 10.1.2.3', chain), '198.51.100.9');
  assert.equal(clientAddress('::1', '2001:db8::1, fd00::5', chain), '2001:db8::1');
  // Every hop trusted: the left-most is as far as anything says.
  assert.equal(clientAddress('127.0.0.1', '10.0.0.9, 10.0.0.8', chain), '10.0.0.9');
  // Something that is not an address where a trusted proxy would have written one: the nearest trusted hop.
  assert.equal(clientAddress('127.0.0.1', 'garbage', local), '127.0.0.1');
  assert.equal(clientAddress('10.0.0.2', '198.51.100.9, nonsense, 10.0.0.3', chain), '10.0.0.3');
  // Ports and brackets that some proxies write.
  assert.equal(clientAddress('127.0.0.1', '198.51.100.9:4711', local), '198.51.100.9');
  assert.equal(clientAddress('127.0.0.1', '[2001:db8::7]:443', local), '2001:db8::7');
  assert.equal(clientAddress('127.0.0.1', '[2001:DB8::7]', local), '2001:db8::7');
});

test('addresses are normalised so one client has one spelling', () => {
  assert.equal(normalizeAddress('::ffff:192.0.2.1'), '192.0.2.1');
  assert.equal(normalizeAddress('0:0:0:0:0:ffff:c000:201'), '192.0.2.1');
  assert.equal(normalizeAddress('[::1]'), '::1');
  assert.equal(normalizeAddress('fe80::1%eth0'), 'fe80::1');
  assert.equal(normalizeAddress('2001:DB8::1'), '2001:db8::1');
  for (const bad of ['', 'localhost', '1.2.3', '1.2.3.256', '::g', '1.2.3.4:80', 'unknown'])
    assert.equal(normalizeAddress(bad), null, bad);
});

test('rate-limit buckets: an IPv4 address, an IPv6 /64', () => {
  assert.equal(addressBucket('198.51.100.7'), '198.51.100.7');
  assert.equal(addressBucket('::ffff:198.51.100.7'), '198.51.100.7');
  assert.equal(addressBucket('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(
    addressBucket('2001:DB8:1:2:ffff:ffff:ffff:ffff'),
    '2001:db8:1:2::/64',
    'rotating within the /64 keeps the bucket',
  );
  assert.equal(addressBucket('::1'), '0:0:0:0::/64');
  assert.equal(addressBucket('unknown'), 'unknown');
});

test('ranges: IPv4 and IPv6 CIDRs, IPv4-mapped ranges', () => {
  assert.ok(isTrusted('10.200.3.4', chain));
  assert.ok(!isTrusted('11.0.0.1', chain));
  assert.ok(isTrusted('fd12:3456::1', chain));
  assert.ok(!isTrusted('fe80::1', chain));
  assert.ok(isTrusted('::ffff:10.1.1.1', chain));
  const mapped = parseTrustedProxies('::ffff:192.168.0.0/112');
  assert.ok(isTrusted('192.168.7.7', mapped));
  assert.ok(!isTrusted('192.169.0.1', mapped));
  assert.ok(isTrusted('203.0.113.1', parseTrustedProxies('0.0.0.0/0')));
});

test('TOOLSMITH_TRUSTED_PROXIES: each bad entry is named with what is wrong', () => {
  const cases: Array<[string, RegExp]> = [
    [
      'localhost',
      /TOOLSMITH_TRUSTED_PROXIES: "localhost" is not an IP address or CIDR range .*host names are not accepted/,
    ],
    ['127.0.0.1, proxy.internal', /"proxy.internal" is not an IP address/],
    ['10.0.0.0/33', /"10.0.0.0\/33" has prefix length "33"; an IPv4 range takes 0 to 32/],
    ['fd00::/129', /"fd00::\/129" has prefix length "129"; an IPv6 range takes 0 to 128/],
    ['10.0.0.0/', /has prefix length ""/],
    ['10.0.0.0/8x', /has prefix length "8x"/],
    ['::ffff:10.0.0.0/90', /wider than the IPv4-mapped range/],
    ['1.2.3.4.5', /"1.2.3.4.5" is not an IP address/],
  ];
  for (const [raw, re] of cases) assert.throws(() => parseTrustedProxies(raw), re, raw);
  // config() reads it, so every process refuses a bad value the same way.
  assert.throws(() => config({ TOOLSMITH_TRUSTED_PROXIES: 'nginx' }), /TOOLSMITH_TRUSTED_PROXIES: "nginx"/);
  assert.deepEqual(config({ TOOLSMITH_TRUSTED_PROXIES: '127.0.0.1,::1' }).trustedProxies, ['127.0.0.1', '::1']);
  assert.deepEqual(config({}).trustedProxies, []);
});

test('the app reads the address only from the header the web server sets', () => {
  assert.equal(requestAddress(new Headers({ [CLIENT_ADDRESS_HEADER]: '198.51.100.3' })), '198.51.100.3');
  assert.equal(requestAddress(new Headers({ 'x-forwarded-for': '198.51.100.3', 'x-real-ip': '198.51.100.4' })), null);
});
