// html-safety.js DIR SCRIPT PAGE... — opens fold2html pages made from
// hostile input (see test/scripts/html-safety.sh, which writes DIR) and
// checks that their one script is the writer's, that nothing from the
// input runs, loads or navigates in headless Chromium, and that the names
// shown are the input with bad bytes replaced.
//
// DIR holds names.folded (the frame names), opt/{title,subtitle,countname,
// nametype,fonttype} (the option values, raw bytes), canary.html (unsafe
// on purpose: it must trip the traps) and PAGE.html for each PAGE
// argument; SCRIPT is lib/render/fold2html.js.  Expected text is computed
// here from those bytes by the rule in lib/render/xmlesc.h, with a decoder
// of its own.  Exit 0 pass, 1 fail, 3 when Chromium cannot start.
"use strict";
const fs = require("fs");
const path = require("path");
const { launch } = require("./launch");

const [dir, scriptFile, ...names] = process.argv.slice(2);
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
const want = { title: opt("title"), subtitle: opt("subtitle"), countname: opt("countname"),
	       nametype: opt("nametype"), fonttype: opt("fonttype") };
// every frame below "root" in the "root;NAME... 10" lines, cleaned
const frameNames = [...new Set(splitBytes(fs.readFileSync(path.join(dir, "names.folded")), 10)
	.filter((l) => l.length)
	.flatMap((l) => splitBytes(l.subarray(0, l.lastIndexOf(32)), 59).slice(1).map(clean))
	.filter((n) => n !== ""))];
const SCRIPT = fs.readFileSync(scriptFile, "utf8");

// (a) the script element, from the bytes
function checkScript(name) {
	const page = fs.readFileSync(path.join(dir, name + ".html"), "utf8");
	const open = page.indexOf("<script>"), close = page.lastIndexOf("</script>");
	const text = page.slice(open + 8, close);
	check(open > 0 && page.indexOf("<script", open + 1) < 0 && !/<\/script/i.test(text) &&
	      !/<!--|<script/i.test(text) && page.slice(close + 9) === "\n</body>\n</html>\n",
	      `${name}: one <script>, with no "</script", "<script" or "<!--" inside`);
	const m = /^\n\/\/<!\[CDATA\[\nvar fg_config = (\{[^\n]*\});\nvar fg_data = "([A-Za-z0-9+/]*={0,2})";\n([\s\S]*)\n\/\/\]\]>\n$/.exec(text);
	if (!check(m !== null, `${name}: the script is the configuration, a base64 string and the page's code`))
		return;
	let cfg = null;
	try {
		cfg = JSON.parse(m[1]);
	} catch (e) {
		console.log("  " + e.message);
	}
	check(cfg !== null && cfg.countname === want.countname && cfg.nametype === want.nametype &&
	      cfg.fonttype === want.fonttype,
	      `${name}: the configuration is JSON whose strings are the cleaned options`);
	check(m[3] === SCRIPT, `${name}: the code is lib/render/fold2html.js, byte for byte`);
	const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)"\/>/.exec(page);
	check(csp && /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+={0,2}'; style-src 'sha256-[A-Za-z0-9+/]+={0,2}'; worker-src blob:;/.test(csp[1]),
	      `${name}: a Content-Security-Policy allows only the page's own script and style`);
}

// Installed before any script of the page runs.
function traps() {
	const hits = [];
	Object.defineProperty(window, "__fk_hits", { value: hits });
	const trap = (name) => function () {
		hits.push(name + "(" + Array.from(arguments).join(",").slice(0, 60) + ")");
	};
	for (const f of ["alert", "confirm", "prompt", "print", "open", "fk_pwn"])
		Object.defineProperty(window, f, { value: trap(f), writable: false, configurable: false });
	Object.defineProperty(window, "__fk_hooked", { value: true });
	const P = CanvasRenderingContext2D.prototype, rects = [];
	const fillRect = P.fillRect, clearRect = P.clearRect;
	P.clearRect = function () {
		rects.length = 0;
		return clearRect.apply(this, arguments);
	};
	P.fillRect = function (x, y, w, h) {
		rects.push({ x, y, w, h });
		return fillRect.apply(this, arguments);
	};
	Object.defineProperty(window, "__fk_rects", { value: rects });
}

function watch(page, log) {
	page.on("pageerror", (e) => log.errors.push(String(e).slice(0, 200)));
	page.on("console", (m) => {
		if (m.type() === "error")
			log.errors.push("console: " + m.text().slice(0, 200));
	});
	page.on("framenavigated", (f) => log.navs.push(f.url()));
	page.on("requestfailed", (r) => log.failed.push(r.url().slice(0, 80)));
	page.on("dialog", (d) => {
		log.dialogs.push(d.type() + ": " + d.message().slice(0, 60));
		d.dismiss().catch(() => {});
	});
}

async function canary(ctx) {
	const page = await ctx.newPage();
	await page.goto("file://" + path.join(dir, "canary.html"));
	await page.click("#canary");
	await page.waitForTimeout(200);
	const hits = await page.evaluate(() => window.__fk_hits || null);
	check(hits && hits.some((h) => h.startsWith("alert(")) && hits.some((h) => h.startsWith("fk_pwn(")),
	      "the unsafe canary page trips the traps (script and javascript: link): " + JSON.stringify(hits));
	await page.close();
}

const settle = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

async function checkPage(ctx, name) {
	const file = path.join(dir, name + ".html"), url = "file://" + file;
	const log = { errors: [], navs: [], dialogs: [], failed: [] };
	const pages = [], requests = [];
	const onPage = (p) => pages.push(p);
	ctx.on("page", onPage);
	await ctx.route((u) => u.protocol !== "file:", (r) => { requests.push(r.request().url()); r.abort(); });
	const page = await ctx.newPage();
	pages.length = 0;
	watch(page, log);
	await page.setViewportSize({ width: 1400, height: 900 });
	await page.goto(url);
	await page.waitForSelector("html[data-ready]", { timeout: 0 });
	check(await page.evaluate(() => window.__fk_hooked === true), `${name}: the traps are installed before load`);

	// (c) the text shown
	const text = (sel) => page.$eval(sel, (e) => e.textContent);
	check(await text("#title") === want.title && await page.title() === want.title,
	      `${name}: #title and the page's title are the cleaned --title`);
	check(await text("#subtitle") === want.subtitle, `${name}: #subtitle is the cleaned --subtitle`);

	// hover and click every frame drawn: each name shown, as cleaned
	const box = await page.$eval("#canvas", (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top }; });
	const rects = await page.evaluate(() => window.__fk_rects.slice());
	const shown = new Set(), tips = new Set();
	for (const r of rects) {
		await page.mouse.move(box.x + r.x + r.w / 2, box.y + r.y + 7);
		const d = await text("#details");
		if (d.startsWith(want.nametype + " "))
			shown.add(d);
		tips.add((await text("#tooltip")).split("\n")[0]);
	}
	const missing = frameNames.filter((n) => ![...shown].some((d) => d.startsWith(want.nametype + " " + n + " (") &&
		d.slice(want.nametype.length + n.length + 3).match(/^[0-9][0-9,.]* /) &&
		d.includes(" " + want.countname + ", ")) || !tips.has(n));
	if (missing.length)
		console.log("  shown: " + JSON.stringify([...shown].slice(0, 4)) + " tips: " + JSON.stringify([...tips].slice(0, 4)));
	check(missing.length === 0, `${name}: hovering shows each of the ${frameNames.length} names cleaned, with the cleaned --nametype and --countname` +
	      (missing.length ? ` (missing: ${missing.map((n) => JSON.stringify(n.slice(0, 40))).join(", ")})` : ""));

	// zoom into each frame of the first row, and open a sandwich of it
	const narrow = rects.filter((r) => r.w < 1000);
	const row = narrow.filter((r) => Math.abs(r.y - narrow[0].y) < 1);
	let zooms = 0;
	for (const r of row.slice(0, 40)) {
		await page.keyboard.press("Escape");
		await page.mouse.click(box.x + r.x + r.w / 2, box.y + r.y + 7);
		zooms += /[?&]x=/.test(await page.evaluate(() => location.search)) ? 1 : 0;
	}
	check(zooms > 0, `${name}: clicking frames zooms them (${zooms})`);
	let sandwiches = 0;
	for (const r of rects.slice(0, 30)) {
		await page.keyboard.press("Escape");
		await page.keyboard.press("Escape");
		await settle(page);
		const now = await page.evaluate(() => window.__fk_rects.slice());
		const t = now.find((q) => q.w > 2 && q.w < 1000 && Math.abs(q.x - r.x) < 0.5);
		if (!t)
			continue;
		await page.keyboard.down("Shift");
		await page.mouse.click(box.x + t.x + t.w / 2, box.y + t.y + 7);
		await page.keyboard.up("Shift");
		sandwiches += /[?&]sandwich=/.test(await page.evaluate(() => location.search)) ? 1 : 0;
	}
	check(sandwiches > 0, `${name}: Shift+click opens sandwiches (${sandwiches})`);

	// searches with hostile regexes, typed
	const regexes = ["<script>alert\\(1\\)</script>", "]]>", "(", "\"'&amp;", "javascript:alert\\(7\\)",
			 "\u2028", "</script><script>alert(50)</script>", ".*", "__proto__", "\ufffd"];
	const matched = [];
	for (const re of regexes) {
		await page.fill("#term", re);
		await page.press("#term", "Enter");
		await page.waitForFunction(() => /^(Matched|Invalid|Search stopped)/.test(
			document.getElementById("matched").textContent), null, { timeout: 0 });
		matched.push(await text("#matched"));
	}
	const share = /^Matched: \d+\.\d\d% \(/;
	check(matched.every((m) => share.test(m) || m === "Invalid regex") && matched[2] === "Invalid regex" &&
	      !matched[0].startsWith("Matched: 0.00%") && matched[7].startsWith("Matched: 100.00%"),
	      `${name}: hostile searches report a share or "Invalid regex": ${JSON.stringify(matched).slice(0, 300)}`);

	// a hostile URL: ?s= a regex, ?x=&y= not a frame, a sandwich of markup
	await page.goto(url + "?s=" + encodeURIComponent("<script>alert(51)</script>|onerror") +
			"&x=" + encodeURIComponent("javascript:alert(52)") +
			"&y=" + encodeURIComponent("\"><svg onload=alert(53)>") + "&n=__proto__" +
			"&v=" + encodeURIComponent("<img src=x onerror=alert(54)>") +
			"&sandwich=" + encodeURIComponent("<img src=x onerror=fk_pwn(\"img\")>"));
	await page.waitForFunction(() => /^(Matched|Invalid|Search stopped)/.test(
		document.getElementById("matched").textContent), null, { timeout: 0 });
	check(/^Matched: [1-9]/.test(await text("#matched")) &&
	      /[?&]sandwich=/.test(await page.evaluate(() => location.search)),
	      `${name}: a hostile URL restores the search and the sandwich of a hostile name`);
	await page.mouse.move(box.x + 300, box.y + 40);

	await page.waitForTimeout(300);
	const hits = await page.evaluate(() => window.__fk_hits);
	check(hits.length === 0, `${name}: no trap was hit${hits.length ? ": " + hits.join(" ") : ""}`);
	check(log.dialogs.length === 0, `${name}: no dialog${log.dialogs.length ? ": " + log.dialogs.join("; ") : ""}`);
	check(log.errors.length === 0, `${name}: no uncaught exception or console error${log.errors.length ? ": " + log.errors.join("; ") : ""}`);
	const dom = await page.evaluate(() => ({
		scripts: document.getElementsByTagName("script").length,
		foreign: document.querySelectorAll("img, iframe, object, embed, svg, a, link, form").length,
		on: Array.from(document.querySelectorAll("*")).filter((e) =>
			Array.from(e.attributes).some((a) => /^on/i.test(a.name))).length,
	}));
	check(dom.scripts === 1 && dom.foreign === 0 && dom.on === 0,
	      `${name}: still one script, no element from the input, no on* attribute (${JSON.stringify(dom)})`);
	check(log.navs.every((u) => u.startsWith(url)) && requests.length === 0 && log.failed.length === 0 &&
	      pages.length === 0, `${name}: no navigation, no request, no new page: ` +
	      JSON.stringify(log.navs.filter((u) => !u.startsWith(url)).concat(requests, log.failed)).slice(0, 300));

	for (const p of pages)
		await p.close().catch(() => {});
	await page.close().catch(() => {});
	ctx.off("page", onPage);
	await ctx.unrouteAll();
}

async function main() {
	for (const n of names)
		checkScript(n);
	const browser = await launch();
	try {
		await browser.ctx.addInitScript(traps);
		await canary(browser.ctx);
		for (const n of names)
			await checkPage(browser.ctx, n);
	} finally {
		await browser.close();
	}
	console.log(failures ? `${failures} checks FAILED` : "all checks passed");
	process.exit(failures ? 1 : 0);
}

main().catch((e) => {
	console.error("html-safety FAILED: " + e.stack);
	process.exit(1);
});
