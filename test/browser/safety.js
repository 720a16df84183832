// safety.js DIR SVG... — opens fold2svg outputs made from hostile input
// (see test/scripts/svg-safety.sh, which writes DIR) in headless Chromium
// and checks that nothing from the input runs or navigates, and that the
// names shown are the input with bad bytes replaced.
//
// DIR holds names.folded (the frame names), opt/{title,subtitle,countname,
// nametype} (the option values, raw bytes), nameattr, canary.svg (unsafe on
// purpose: it must trip the traps) and SVG.svg for each SVG argument.
// Expected text is computed here from those bytes by the rule in
// lib/render/xmlesc.h, with a decoder of its own.  Exit 0 pass, 1 fail, 3 when
// Chromium cannot start.
"use strict";
const fs = require("fs");
const path = require("path");
const { launch } = require("./launch");

const [dir, ...svgs] = process.argv.slice(2);
let failures = 0;
function check(ok, what) {
	console.log((ok ? "ok   " : "FAIL ") + what);
	if (!ok)
		failures++;
	return ok;
}

// xmlesc.h's rule: decode UTF-8; every byte of an invalid, overlong,
// surrogate or out-of-range sequence becomes one U+FFFD, and so does every
// C0 control, DEL, C1 control, U+FFFE and U+FFFF.
function clean(buf) {
	let out = "", i = 0;
	while (i < buf.length) {
		const b = buf[i];
		let n = 0, c = b, min = 0;
		if (b >= 0xc2 && b <= 0xdf) { n = 1; c = b & 0x1f; min = 0x80; }
		else if (b >= 0xe0 && b <= 0xef) { n = 2; c = b & 0x0f; min = 0x800; }
		else if (b >= 0xf0 && b <= 0xf4) { n = 3; c = b & 0x07; min = 0x10000; }
		else if (b >= 0x80) { out += "\ufffd"; i++; continue; }
		let ok = i + n < buf.length + (n ? 0 : 1);
		for (let k = 1; ok && k <= n; k++) {
			if ((buf[i + k] & 0xc0) !== 0x80)
				ok = false;
			else
				c = c * 64 + (buf[i + k] & 0x3f);
		}
		if (ok && n && (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)))
			ok = false;
		if (!ok) { out += "\ufffd"; i++; continue; }
		i += n + 1;
		const bad = c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0xfffe || c === 0xffff;
		out += bad ? "\ufffd" : String.fromCodePoint(c);
	}
	return out;
}

function splitBytes(buf, byte) {
	const parts = [];
	let s = 0;
	for (let i = 0; i <= buf.length; i++)
		if (i === buf.length || buf[i] === byte) {
			parts.push(buf.subarray(s, i));
			s = i + 1;
		}
	return parts;
}

const opt = (k) => clean(fs.readFileSync(path.join(dir, "opt", k)));
const want = { title: opt("title"), subtitle: opt("subtitle"),
	       countname: opt("countname"), nametype: opt("nametype") };
// every frame below "root" in the "root;NAME... 10" lines, cleaned (a name
// with ';' in it, such as "&amp;", is several frames)
const names = [...new Set(splitBytes(fs.readFileSync(path.join(dir, "names.folded")), 10)
	.filter((l) => l.length)
	.flatMap((l) => splitBytes(l.subarray(0, l.lastIndexOf(32)), 59).slice(1).map(clean))
	.filter((n) => n !== ""))];
// nameattr titles replace the frame's title
const attrTitle = {};
for (const l of splitBytes(fs.readFileSync(path.join(dir, "nameattr")), 10)) {
	const f = splitBytes(l, 9);
	for (const kv of f.slice(1))
		if (kv.subarray(0, 6).toString() === "title=")
			attrTitle[clean(f[0])] = clean(kv.subarray(6));
}

// Installed before any script of the page runs.  eval stays (playwright
// evaluates with it) and so does prompt():
// fold2svg's search asks with it, and the dialog handler answers it.
function traps() {
	const hits = [];
	Object.defineProperty(window, "__fk_hits", { value: hits });
	const trap = (name) => function () {
		hits.push(name + "(" + Array.from(arguments).join(",").slice(0, 60) + ")");
	};
	for (const f of ["alert", "confirm", "print", "open", "fk_pwn"])
		Object.defineProperty(window, f, { value: trap(f), writable: false, configurable: false });
	Object.defineProperty(window, "__fk_hooked", { value: true });
}

function watch(page, log) {
	page.on("pageerror", (e) => log.errors.push(String(e).slice(0, 200)));
	page.on("console", (m) => { if (m.type() === "error") log.errors.push("console: " + m.text().slice(0, 200)); });
	page.on("framenavigated", (f) => log.navs.push(f.url()));
	page.on("requestfailed", (r) => log.failed.push(r.url().slice(0, 80) + " " + (r.failure() || {}).errorText));
	page.on("dialog", (d) => {
		if (d.type() === "prompt" && log.answers.length) {
			d.accept(log.answers.shift());
		} else {
			log.dialogs.push(d.type() + ": " + d.message().slice(0, 60));
			d.dismiss().catch(() => {});
		}
	});
}

const SCHEME_BAD = /^\s*(javascript|data|vbscript):/i;

async function canary(ctx) {
	const page = await ctx.newPage(), log = { errors: [], navs: [], dialogs: [], answers: [], failed: [] };
	watch(page, log);
	await page.goto("file://" + path.join(dir, "canary.svg"));
	await page.click("#canary");
	await page.waitForTimeout(200);
	const hits = await page.evaluate(() => window.__fk_hits || null);
	check(hits && hits.some((h) => h.startsWith("alert(")) && hits.some((h) => h.startsWith("fk_pwn(")),
	      "the unsafe canary SVG trips the traps (script and javascript: link): " + JSON.stringify(hits));
	await page.close();
}

async function checkSvg(ctx, name) {
	const file = path.join(dir, name + ".svg"), url = "file://" + file;
	const log = { errors: [], navs: [], dialogs: [], answers: [], failed: [] };
	const pages = [], requests = [];
	const onPage = (p) => pages.push(p);
	ctx.on("page", onPage);
	await ctx.route((u) => u.protocol !== "file:", (r) => { requests.push(r.request().url()); r.abort(); });
	const page = await ctx.newPage();
	pages.length = 0;
	watch(page, log);
	await page.goto(url);
	check(await page.evaluate(() => window.__fk_hooked === true), `${name}: the traps are installed before load`);

	// (c) the text shown
	const text = (sel) => page.$eval(sel, (e) => e.textContent);
	// the search runs in a worker: wait for its answer (or its refusal)
	const searched = () => page.waitForFunction(() => /^(Matched|Invalid|Search stopped)/.test(
		document.getElementById("matched").textContent), null, { timeout: 0 });
	check(await text("#title") === want.title, `${name}: #title is the cleaned --title`);
	check(await text("#subtitle") === want.subtitle, `${name}: #subtitle is the cleaned --subtitle`);
	const titles = await page.$$eval("#frames > g > title", (ts) => ts.map((t) => t.textContent));
	for (const n of names) {
		// "NAME (COUNT COUNTNAME, ...)"; differential graphs show other counts
		const shows = (x) => {
			const rest = x.slice(n.length + 2), m = /^[0-9][0-9,.]* /.exec(rest);
			return x.startsWith(n + " (") && m && rest.slice(m[0].length).startsWith(want.countname + ", ");
		};
		const t = titles.find((x) => attrTitle[n] !== undefined ? x === attrTitle[n] : shows(x));
		check(t !== undefined, `${name}: a frame titled ${JSON.stringify(n.slice(0, 50))}${n.length > 50 ? "..." : ""}`);
	}

	// (b) live DOM: still nothing but fold2svg's own
	const dom = await page.evaluate(() => ({
		scripts: document.getElementsByTagName("script").length,
		foreign: document.querySelectorAll("foreignObject, iframe, img, object, embed").length,
		on: Array.from(document.querySelectorAll("*")).filter((e) =>
			Array.from(e.attributes).some((a) => /^on/i.test(a.name))).length,
		links: Array.from(document.querySelectorAll("a")).map((a) =>
			a.getAttribute("href") || a.getAttributeNS("http://www.w3.org/1999/xlink", "href")),
	}));
	check(dom.scripts === 1 && dom.foreign === 0 && dom.on === 0,
	      `${name}: one script, no embedded elements or on* attributes (${JSON.stringify(dom).slice(0, 120)})`);
	check(dom.links.length === 1 && !dom.links.some((h) => SCHEME_BAD.test(h)),
	      `${name}: the only link is fk_link_ok's`);

	// hover, click (zoom) and Ctrl-click (follow a link) every frame
	const n = await page.$$eval("#frames > g", (gs) => gs.length);
	let details = 0, zooms = 0;
	for (let i = 0; i < n; i++) {
		await page.keyboard.press("Escape");
		const g = (await page.$$("#frames > g"))[i];
		await g.hover();
		const d = await text("#details"), t = titles[i];
		if (d === want.nametype + " " + t)
			details++;
		await g.click();
		zooms += await page.evaluate((i) => /[?&]x=/.test(location.search), i) ? 1 : 0;
		if (await g.$("a"))
			await g.click({ modifiers: ["Control"] });
	}
	check(details === n, `${name}: hovering each of the ${n} frames shows the cleaned --nametype and its title (${details})`);
	check(zooms >= n - 1, `${name}: clicking the frames zooms them (${zooms} of ${n})`);

	// searches with hostile regexes, through the prompt and through Ctrl-F
	const regexes = ["<script>alert\\(1\\)</script>", "]]>", "(", "\"'&amp;", "javascript:alert\\(7\\)",
			 "\u2028", "</script><script>alert(50)</script>", ".*"];
	const matched = [];
	for (const re of regexes) {
		await page.keyboard.press("Escape");
		await page.keyboard.press("Escape");
		log.answers.push(re);
		await page.keyboard.press("Control+f");
		await searched();
		matched.push(await text("#matched"));
	}
	check(matched.every((m) => /^(Matched: \d+\.\d%|Invalid regex)$/.test(m)) &&
	      matched[0] !== "Matched: 0.0%" && matched[2] === "Invalid regex",
	      `${name}: hostile searches report a share or "Invalid regex": ${JSON.stringify(matched)}`);
	check(log.answers.length === 0, `${name}: every search prompt was answered`);

	// a hostile URL: ?s= a regex, ?x=&y= not a frame
	await page.goto(url + "?s=" + encodeURIComponent("<script>alert(51)</script>|fk_link") +
			"&x=" + encodeURIComponent("javascript:alert(52)") +
			"&y=" + encodeURIComponent("\"><svg onload=alert(53)>") + "&i=1");
	await searched();
	check(/^Matched: [1-9]/.test(await text("#matched")), `${name}: a hostile ?s= restores the search`);

	await page.waitForTimeout(300);
	const hits = await page.evaluate(() => window.__fk_hits);
	check(hits.length === 0, `${name}: no trap was hit${hits.length ? ": " + hits.join(" ") : ""}`);
	check(log.dialogs.length === 0, `${name}: no unexpected dialog${log.dialogs.length ? ": " + log.dialogs.join("; ") : ""}`);
	check(log.errors.length === 0, `${name}: no uncaught exception or console error${log.errors.length ? ": " + log.errors.join("; ") : ""}`);
	const followed = "file://" + path.join(dir, "fk-followed.html");
	const badNav = log.navs.concat(requests, log.failed).filter((u) => SCHEME_BAD.test(u));
	check(badNav.length === 0, `${name}: no javascript: or data: navigation or load${badNav.length ? ": " + badNav.join(" ") : ""}`);
	const opened = pages.map((p) => p.url());
	check(log.navs.every((u) => u.startsWith(url)) && requests.length === 0 &&
	      opened.every((u) => u.startsWith(followed + "?")),
	      `${name}: no page but the SVG and fk_link_ok's fk-followed.html, no request off file://: ${JSON.stringify(opened.concat(requests)).slice(0, 300)}`);
	check(opened.length > 0, `${name}: Ctrl-click follows links (fk_link_ok's opened), so the check above means something`);
	if (log.failed.length)
		console.log(`note ${name}: loads the browser refused: ${log.failed.join("; ")}`);

	for (const p of pages)
		await p.close().catch(() => {});
	await page.close().catch(() => {});
	ctx.off("page", onPage);
	await ctx.unrouteAll();
}

async function main() {
	const browser = await launch();
	try {
		await browser.ctx.addInitScript(traps);
		await canary(browser.ctx);
		for (const s of svgs)
			await checkSvg(browser.ctx, s);
	} finally {
		await browser.close();
	}
	console.log(failures ? `${failures} checks FAILED` : "all checks passed");
	process.exit(failures ? 1 : 0);
}

main().catch((e) => {
	console.error("svg-safety FAILED: " + e.stack);
	process.exit(1);
});
