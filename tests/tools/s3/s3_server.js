// s3_server.js - the S3-compatible server the tests talk to (started and
// stopped by scripts/s3-server; see docs/testing.md for why this one).
//
//   node s3_server.js DIR
//
// Serves the objects kept in DIR/data on 127.0.0.1, on a free port, and
// writes its base URL to DIR/url once it listens (the caller waits for that
// file). Signed requests must carry a valid AWS Signature V4 made with the
// one key pair it knows, S3_ACCESS_KEY / S3_SECRET_KEY from the environment:
// the package's built-in key is revoked, so that a request signed with any
// other secret fails with SignatureDoesNotMatch. Unsigned requests are served
// anonymously, as s3rver always does (the tests prove the adapter signs every
// call another way: with a wrong secret every call fails).
// With S3_TLS_CERT and S3_TLS_KEY (PEM files) it serves https instead, with
// that certificate (the test of BARBERIA_STORAGE_CA_FILE).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const S3rver = require('@20minutes/s3rver/lib/s3rver');
const AWSAccount = require('@20minutes/s3rver/lib/models/account');

const dir = process.argv[2];
const accessKey = process.env.S3_ACCESS_KEY;
const secretKey = process.env.S3_SECRET_KEY;
if (!dir || !accessKey || !secretKey) {
  process.stderr.write('usage: S3_ACCESS_KEY=.. S3_SECRET_KEY=.. node s3_server.js DIR\n');
  process.exit(2);
}

AWSAccount.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
AWSAccount.DUMMY_ACCOUNT.createKeyPair(accessKey, secretKey);

const tlsCert = process.env.S3_TLS_CERT;
const tlsKey = process.env.S3_TLS_KEY;
const tls = tlsCert && tlsKey
  ? { cert: fs.readFileSync(tlsCert), key: fs.readFileSync(tlsKey) } : {};

const data = path.join(dir, 'data');
fs.mkdirSync(data, { recursive: true });
const server = new S3rver({
  ...tls,
  address: '127.0.0.1',
  port: 0,
  directory: data,
  silent: process.env.S3_VERBOSE !== '1',
  // virtual-hosted requests name the bucket in <bucket>.s3.localhost
  serviceEndpoint: 'localhost',
  vhostBuckets: false,
});

server.run().then(
  (addr) => {
    const url = `${tls.cert ? 'https' : 'http'}://127.0.0.1:${addr.port}`;
    const tmp = path.join(dir, 'url.tmp');
    fs.writeFileSync(tmp, url + '\n');
    fs.renameSync(tmp, path.join(dir, 'url'));
  },
  (err) => {
    process.stderr.write(`s3 server: cannot start: ${err.message}\n`);
    process.exit(1);
  },
);

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => server.close().finally(() => process.exit(0)));
}
