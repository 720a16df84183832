// test/store/pyroscope-standin.js DIR [STATUS] - a stand-in for Grafana
// Pyroscope's ingest endpoint, for test/scripts/store.sh: listens on
// 127.0.0.1 (a free port, written to DIR/port), and writes each request
// it gets to DIR/req-N: the request line ("POST /ingest?..."), the
// Content-Type and Authorization headers, an empty line, then the body
// byte for byte.  Answers STATUS (default 200) with a short text.
// Runs until killed.
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const dir = process.argv[2];
const status = Number(process.argv[3] || 200);
let n = 0;

const server = http.createServer((req, res) => {
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		const head = `${req.method} ${req.url}\n` +
			`content-type: ${req.headers['content-type'] || ''}\n` +
			`authorization: ${req.headers['authorization'] || ''}\n\n`;
		n += 1;
		fs.writeFileSync(path.join(dir, `req-${n}`),
			Buffer.concat([Buffer.from(head), ...chunks]));
		res.writeHead(status, { 'Content-Type': 'text/plain' });
		res.end(status === 200 ? '' : `stand-in says ${status}\n`);
	});
});
server.listen(0, '127.0.0.1', () => {
	fs.writeFileSync(path.join(dir, 'port.tmp'), String(server.address().port));
	fs.renameSync(path.join(dir, 'port.tmp'), path.join(dir, 'port'));
});
