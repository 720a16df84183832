// check-html.js DIR — fold2html's pages in headless Chromium, checked
// against a model of the folded input computed here (test/scripts/
// html-browser.sh writes DIR: NAME.folded, NAME.html, and fold2svg's
// NAME.svg and NAME.all.svg, the latter with --minwidth=0, so every frame).
//
// The model is flamegraph.pl's flow, written again: equal stacks summed,
// stacks in bytewise order, neighbouring equal frames merged, each frame
// from where the samples before it end.  What the page draws is read from
// the canvas's own calls (fillRect, fillText, wrapped before the page
// loads), so the check sees the drawing, not the page's variables.
// Colours and titles are compared with fold2svg's for the same frame.
// Exit 0 pass, 1 fail, 3 when Chromium cannot start.
"use strict";
const fs = require("fs");
const path = require("path");
const { launch } = require("./launch");

const dir = process.argv[2];
let failures = 0;
function check(ok, what) {
	console.log((ok ? "ok   " : "FAIL ") + what);
	if (!ok)
		failures++;
	return ok;
}

// --- the model

function readFolded(file, ncounts) {
	const lines = [];
	for (const l of fs.readFileSync(file, "utf8").split("\n")) {
		if (!l)
			continue;
		const f = l.split(" ");
		const c1 = Number(f.pop()), c0 = ncounts === 2 ? Number(f.pop()) : c1;
		lines.push({ stack: f.join(" "), c0, c1 });
	}
	return lines;
}

// flamegraph.pl's flow: the frames in pre-order with their places
function flow(lines) {
	const sum = new Map();
	for (const l of lines) {
		const s = sum.get(l.stack) || { stack: l.stack, c0: 0, c1: 0 };
		s.c0 += l.c0;
		s.c1 += l.c1;
		sum.set(l.stack, s);
	}
	const stacks = [...sum.values()].sort((a, b) => Buffer.compare(Buffer.from(a.stack), Buffer.from(b.stack)));
	const frames = [], open = [];
	let pos = 0, prev = [], maxdelta = 1;
	const root = { name: "all", depth: 0, start: 0, end: 0, delta: 0, base: 0, parent: -1, index: 0 };
	frames.push(root);
	open.push(root);
	for (const s of stacks) {
		const names = s.stack.split(";");
		let same = 0;
		while (same < names.length && same < prev.length && names[same] === prev[same])
			same++;
		while (open.length > same + 1)
			open.pop().end = pos;
		for (let k = same; k < names.length; k++) {
			const f = { name: names[k], depth: k + 1, start: pos, end: 0, delta: 0, base: 0,
				    parent: open[open.length - 1].index, index: frames.length };
			frames.push(f);
			open.push(f);
		}
		open[open.length - 1].delta += s.c1 - s.c0;
		for (const f of open)
			f.base += s.c0;
		maxdelta = Math.max(maxdelta, Math.abs(s.c1 - s.c0));
		s.start = pos;
		pos += s.c1;
		s.end = pos;
		prev = names;
	}
	while (open.length)
		open.pop().end = pos;
	for (const f of frames)
		f.width = f.end - f.start;
	return { frames, stacks, total: pos, maxdelta };
}

// a name as shown: without a trailing annotation (_[k], _[j], _[i], _[w])
function shown(name) {
	return name.replace(/_\[[kwij]\]$/, "");
}

// fold2svg's frames: title, x, y, width, fill (as the canvas gives it)
function svgFrames(file) {
	const text = fs.readFileSync(file, "utf8"), out = [];
	const re = /<g><title>([^<]*)<\/title><rect x="([^"]*)" y="([^"]*)" width="([^"]*)" height="[^"]*" fill="rgb\((\d+),(\d+),(\d+)\)"/g;
	const ent = { lt: "<", gt: ">", amp: "&", quot: "\"", "#39": "'" };
	let m;
	while ((m = re.exec(text)))
		out.push({ title: m[1].replace(/&(lt|gt|amp|quot|#39);/g, (_, e) => ent[e]),
			   x: m[2], y: m[3], width: Number(m[4]), fill: hex(+m[5], +m[6], +m[7]) });
	return out;
}

function hex(r, g, b) {
	return "#" + [r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("");
}

// svg_format_pct(): two decimals, halves to even
function pct(part, whole) {
	let p = BigInt(part), w = BigInt(whole);
	const neg = p < 0n;
	if (neg)
		p = -p;
	p *= 10000n;
	let q = p / w;
	const r = p % w;
	if (2n * r > w || (2n * r === w && q % 2n === 1n))
		q++;
	const s = q.toString().padStart(3, "0");
	return (neg && q > 0n ? "-" : "") + s.slice(0, -2) + "." + s.slice(-2);
}

function commas(n) {
	return String(n).replace(/\B(?=(\d{3})+$)/g, ",");
}

// --- the page

function hook() {
	const P = CanvasRenderingContext2D.prototype, rects = [], texts = [];
	const fillRect = P.fillRect, fillText = P.fillText, clearRect = P.clearRect;
	P.clearRect = function () {
		rects.length = 0;
		texts.length = 0;
		return clearRect.apply(this, arguments);
	};
	P.fillRect = function (x, y, w, h) {
		rects.push({ x, y, w, h, fill: this.fillStyle, alpha: this.globalAlpha });
		return fillRect.apply(this, arguments);
	};
	P.fillText = function (t, x, y) {
		texts.push({ t: String(t), x, y });
		return fillText.apply(this, arguments);
	};
	Object.defineProperty(window, "__fk", { value: { rects, texts } });
}

let ctx;
const pages = [];

async function open(name, query, opts) {
	const page = await ctx.newPage();
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
	await page.setViewportSize((opts && opts.viewport) || { width: 1280, height: 1800 });
	if (opts && opts.dark)
		await page.emulateMedia({ colorScheme: "dark" });
	await page.goto("file://" + path.join(dir, name + ".html") + (query || ""));
	await page.waitForSelector("html[data-ready]", { timeout: 0 });
	await settle(page);
	page.errors = errors;
	pages.push(page);
	return page;
}

async function settle(page) {
	await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

async function drawing(page) {
	return page.evaluate(() => {
		const c = document.getElementById("canvas").getBoundingClientRect();
		return { rects: window.__fk.rects.slice(), texts: window.__fk.texts.slice(),
			 left: c.left, top: c.top, inner: c.width - 20 };
	});
}

const text = (page, sel) => page.$eval(sel, (e) => e.textContent);
const search = (page) => page.$eval("#matched", (e) => e.textContent);

async function waitMatched(page) {
	await page.waitForFunction(() => /^(Matched|Invalid|Search stopped)/.test(
		document.getElementById("matched").textContent), null, { timeout: 0 });
	await settle(page);
	return search(page);
}

// The frames a view should draw: zoomed to z (model index), ancestors
// full width, the rest scaled; x and w in canvas pixels.
function expectView(m, z, inner, minPx) {
	const out = [], f = m.frames, Z = f[z];
	const scale = inner / Z.width;
	for (let a = Z.parent; a >= 0; a = f[a].parent)
		out.push({ i: a, x: 10, w: inner, alpha: 0.5 });
	for (const g of f) {
		if (g.depth < Z.depth || g.start < Z.start || g.end > Z.end || (g.depth === Z.depth && g !== Z))
			continue;
		const w = g.width * scale;
		if (w > 0 && w >= minPx)
			out.push({ i: g.index, x: 10 + (g.start - Z.start) * scale, w, alpha: 1 });
	}
	return out;
}

// Matches the rects drawn with the frames expected; up: root at the bottom.
function compare(label, d, m, want, up, fills, fh) {
	const rows = new Map();
	for (const r of d.rects) {
		const k = Math.round(r.y);
		(rows.get(k) || rows.set(k, []).get(k)).push(r);
	}
	const ys = [...rows.keys()];
	const y0 = up ? Math.max(...ys) : Math.min(...ys);
	let found = 0, badFill = 0, badAlpha = 0, near = 0;
	const missing = [];
	for (const e of want) {
		const g = m.frames[e.i], row = rows.get(Math.round(up ? y0 - g.depth * fh : y0 + g.depth * fh)) || [];
		// a frame at the edge of the minimum width may go either way
		const edge = Math.abs(e.w - 0.1) < 1e-3;
		const r = row.find((r) => Math.abs(r.x - e.x) < 0.01 && Math.abs(r.w - e.w) < 0.01);
		if (!r) {
			if (edge)
				near++;
			else if (missing.length < 5)
				missing.push(`${g.name}@${g.depth} x=${e.x.toFixed(2)} w=${e.w.toFixed(3)}`);
			else
				missing.push(null);
			continue;
		}
		found++;
		if (fills && r.fill !== fills[e.i])
			badFill++;
		if (r.alpha !== e.alpha)
			badAlpha++;
	}
	check(missing.length === 0, `${label}: each of the ${want.length} frames expected is drawn in its place` +
	      (missing.length ? ` (${missing.length} missing: ${missing.filter(Boolean).join(", ")})` : ""));
	check(d.rects.length >= found && d.rects.length <= found + near,
	      `${label}: nothing else is drawn (${d.rects.length} rects, ${found} expected)`);
	if (fills)
		check(badFill === 0, `${label}: every frame in fold2svg's colour (${badFill} differ)`);
	check(badAlpha === 0, `${label}: ancestors of the zoomed frame dimmed, the rest not (${badAlpha} differ)`);
}

// The center of frame e (from expectView) on the page, in the drawn rows.
function centerOf(d, m, e, up, fh, y0) {
	const g = m.frames[e.i];
	return { x: d.left + e.x + e.w / 2, y: d.top + (up ? y0 - g.depth * fh : y0 + g.depth * fh) + fh / 2 - 1 };
}

function rootRow(d, up) {
	const ys = d.rects.map((r) => Math.round(r.y));
	return up ? Math.max(...ys) : Math.min(...ys);
}

// --- the checks

async function checkGraph(name, opts) {
	const m = flow(readFolded(path.join(dir, name + ".folded"), opts.ncounts || 1));
	const all = svgFrames(path.join(dir, name + ".all.svg"));
	const fh = 16, up = !opts.inverted;
	check(all.length === m.frames.length &&
	      all.every((s, k) => s.title.startsWith((k ? shown(m.frames[k].name) : "all") + " (")),
	      `${name}: the model has fold2svg's frames (${m.frames.length} and ${all.length})`);
	const fills = all.map((s) => s.fill);
	const page = await open(name);
	let d = await drawing(page);
	const root = expectView(m, 0, d.inner, 0.1);
	compare(`${name} (whole profile)`, d, m, root, up, fills, fh);

	// labels: the names of frames wide enough, cut with ".." as fold2svg
	const cw = 12 * 0.59;
	let labels = 0, badLabels = 0;
	for (const e of root) {
		const fit = Math.floor(e.w / cw), n = [...(e.i ? shown(m.frames[e.i].name) : "all")];
		if (fit < 3)
			continue;
		const want = n.length <= fit ? n.join("") : n.slice(0, fit - 2).join("") + "..";
		labels++;
		if (!d.texts.some((t) => t.t === want && Math.abs(t.x - e.x - 3) < 0.01))
			badLabels++;
	}
	check(labels > 0 && badLabels === 0 && d.texts.length === labels,
	      `${name}: ${labels} labels, each the name as fold2svg cuts it (${badLabels} wrong, ${d.texts.length} drawn)`);

	// hovering shows fold2svg's title of the frame
	const y0 = rootRow(d, up);
	const hover = root.filter((e) => e.w >= 3);
	const step = Math.max(1, Math.floor(hover.length / 150));
	let hovered = 0, badTitle = [];
	for (let k = 0; k < hover.length; k += step) {
		const e = hover[k], c = centerOf(d, m, e, up, fh, y0);
		await page.mouse.move(c.x, c.y);
		const t = await text(page, "#details"), want = "Function: " + all[e.i].title;
		hovered++;
		if (t !== want && badTitle.length < 3)
			badTitle.push(`${JSON.stringify(t)} not ${JSON.stringify(want)}`);
	}
	check(hovered > 0 && badTitle.length === 0,
	      `${name}: hovering ${hovered} frames shows fold2svg's title of each${badTitle.length ? ": " + badTitle.join("; ") : ""}`);
	const tip = await page.$eval("#tooltip", (e) => ({ hidden: e.hidden, text: e.textContent }));
	check(!tip.hidden && tip.text.split("\n")[0] === shown(m.frames[hover[hover.length - 1 - ((hover.length - 1) % step)].i].name),
	      `${name}: a tooltip names the hovered frame`);
	return { m, all, page, d, root, y0, fills };
}

// The frame to zoom into: the widest below depth 1 with children drawn.
function pickZoom(m, minDepth) {
	let best = null;
	for (const f of m.frames)
		if (f.depth >= minDepth && f.width < m.total && (!best || f.width > best.width) &&
		    m.frames.some((g) => g.parent === f.index))
			best = f;
	return best;
}

async function checkZoomAndUrl(name, g) {
	const { m, all, page, fills } = g, fh = 16, up = true;
	const Z = pickZoom(m, 2), svg = svgFrames(path.join(dir, name + ".svg"));
	let d = await drawing(page);
	let e = expectView(m, 0, d.inner, 0.1).find((e) => e.i === Z.index);
	let c = centerOf(d, m, e, up, fh, rootRow(d, up));
	await page.mouse.click(c.x, c.y);
	await settle(page);
	d = await drawing(page);
	const zoomed = expectView(m, Z.index, d.inner, 0.1);
	compare(`${name} zoomed to ${Z.name}`, d, m, zoomed, up, fills, fh);
	check(await page.$eval("#unzoom", (b) => !b.disabled), `${name}: Reset Zoom is offered when zoomed`);

	// the URL names the frame as fold2svg's SVG places it
	const q = new URLSearchParams(await page.evaluate(() => location.search));
	const s = svg.find((s) => s.x === q.get("x") && s.y === q.get("y"));
	check(s && s.title === all[Z.index].title && !q.has("n"),
	      `${name}: the zoom's URL (?x=${q.get("x")}&y=${q.get("y")}) is fold2svg's place for ${Z.name}`);

	// the same URL opens the same view
	const again = await open(name, "?" + q.toString());
	compare(`${name} reopened from the zoom's URL`, await drawing(again), m, zoomed, up, fills, fh);
	await again.close();

	// a link from fold2svg's SVG: another frame's place
	const other = m.frames.filter((f) => f.depth >= 3 && f.width / m.total * 1180 > 20 && f.index !== Z.index)[0];
	const so = svg.find((s) => s.title === all[other.index].title);
	const linked = await open(name, `?x=${so.x}&y=${so.y}`);
	d = await drawing(linked);
	compare(`${name} opened from fold2svg's link to ${other.name}`, d, m,
		expectView(m, other.index, d.inner, 0.1), up, fills, fh);

	// keyboard: Backspace zooms out a level, Escape resets
	await linked.keyboard.press("Backspace");
	await settle(linked);
	d = await drawing(linked);
	compare(`${name} after Backspace (zoomed to the parent)`, d, m,
		expectView(m, other.parent, d.inner, 0.1), up, fills, fh);
	await linked.keyboard.press("Escape");
	await settle(linked);
	d = await drawing(linked);
	compare(`${name} after Escape (whole profile)`, d, m, expectView(m, 0, d.inner, 0.1), up, fills, fh);
	check(!/[?&]x=/.test(await linked.evaluate(() => location.search)), `${name}: Escape clears the zoom from the URL`);

	// Reset Zoom
	await page.click("#unzoom");
	await settle(page);
	d = await drawing(page);
	compare(`${name} after Reset Zoom`, d, m, expectView(m, 0, d.inner, 0.1), up, fills, fh);
	await linked.close();
	return Z;
}

// The samples of stacks with a frame matching re: whole, and within Z.
function shares(m, re, Z) {
	const rootHit = re.test("all");
	let all = 0, inZ = 0;
	for (const s of m.stacks) {
		const hit = rootHit || s.stack.split(";").some((n) => re.test(shown(n)));
		if (!hit)
			continue;
		all += s.c1;
		if (Z && s.start >= Z.start && s.end <= Z.end)
			inZ += s.c1;
	}
	return { all, inZ };
}

async function checkSearch(name, g, Z, terms) {
	const { m, page } = g;
	for (const [term, flags] of terms) {
		const re = new RegExp(term, flags);
		const url = "?s=" + encodeURIComponent(term) + (flags ? "&i=1" : "");
		const p = await open(name, url);
		const got = await waitMatched(p), sh = shares(m, re, null);
		const want = `Matched: ${pct(sh.all, m.total)}% (${commas(sh.all)} samples)`;
		check(got === want, `${name}: ?s=${term}${flags ? "&i=1" : ""} reports ${JSON.stringify(want)} (${JSON.stringify(got)})`);
		// the frames that match are drawn in the search colour
		const d = await drawing(p), y0 = rootRow(d, true);
		const hits = expectView(m, 0, d.inner, 0.1).filter((e) => e.i > 0 && re.test(shown(m.frames[e.i].name)));
		const lit = hits.filter((e) => d.rects.some((r) => Math.round(r.y) === y0 - m.frames[e.i].depth * 16 &&
			Math.abs(r.x - e.x) < 0.01 && r.fill === "#e600e6")).length;
		const magenta = d.rects.filter((r) => r.fill === "#e600e6").length;
		check(lit === hits.length && magenta === hits.length + (re.test("all") ? 1 : 0),
		      `${name}: the ${hits.length} frames drawn that match ${term} are magenta, and only they (${lit}, ${magenta})`);
		await p.close();
	}

	// typed, with a zoom: the share within the zoomed frame too
	const [term] = terms[0], re = new RegExp(term);
	const p = await open(name);
	let d = await drawing(p);
	const e = expectView(m, 0, d.inner, 0.1).find((e) => e.i === Z.index);
	const c = centerOf(d, m, e, true, 16, rootRow(d, true));
	await p.mouse.click(c.x, c.y);
	await p.fill("#term", term);
	await p.press("#term", "Enter");
	const got = await waitMatched(p), sh = shares(m, re, Z);
	const want = `Matched: ${pct(sh.all, m.total)}% (${commas(sh.all)} samples); ${pct(sh.inZ, Z.width)}% of the zoomed frame`;
	check(got === want, `${name}: searching ${term} zoomed to ${Z.name}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
	check(new URLSearchParams(await p.evaluate(() => location.search)).get("s") === term,
	      `${name}: the search is kept in the URL (?s=)`);
	await p.fill("#term", "(");
	await p.press("#term", "Enter");
	check(await waitMatched(p) === "Invalid regex", `${name}: an invalid regex says so`);
	await p.fill("#term", "");
	await p.press("#term", "Enter");
	await settle(p);
	check((await search(p)).trim() === "" && !(await drawing(p)).rects.some((r) => r.fill === "#e600e6"),
	      `${name}: an empty search clears the highlight`);
	await p.close();
}

async function checkIcicle(name, g) {
	const { m, fills } = g;
	const p = await open(name);
	await p.click("#invert");
	await settle(p);
	let d = await drawing(p);
	compare(`${name} as an icicle graph (toggled)`, d, m, expectView(m, 0, d.inner, 0.1), false, fills, 16);
	const q = await p.evaluate(() => location.search);
	check(/[?&]v=icicle/.test(q), `${name}: the icicle view is kept in the URL (${q})`);
	const again = await open(name, q);
	d = await drawing(again);
	compare(`${name} reopened as an icicle graph`, d, m, expectView(m, 0, d.inner, 0.1), false, fills, 16);
	await again.keyboard.press("i");
	await settle(again);
	d = await drawing(again);
	compare(`${name} flipped back with the i key`, d, m, expectView(m, 0, d.inner, 0.1), true, fills, 16);
	await p.close();
	await again.close();
}

// The sandwich of function f: stacks with f, by the frame before its
// first occurrence (callers) and after it (callees).
function sandwichModel(m, f) {
	const callers = new Map(), callees = new Map();
	let total = 0;
	for (const s of m.stacks) {
		const n = s.stack.split(";").map(shown), k = n.indexOf(f);
		if (k < 0)
			continue;
		total += s.c1;
		if (k > 0)
			callers.set(n[k - 1], (callers.get(n[k - 1]) || 0) + s.c1);
		if (k + 1 < n.length)
			callees.set(n[k + 1], (callees.get(n[k + 1]) || 0) + s.c1);
	}
	return { total, callers, callees };
}

async function checkSandwich(name, g, f) {
	const { m } = g, want = sandwichModel(m, f);
	const p = await open(name, "?sandwich=" + encodeURIComponent(f));
	const d = await drawing(p);
	// two trees: callers above (f at their bottom), callees below (f on
	// top), both as wide as the canvas
	const full = [];
	for (const r of d.rects.filter((r) => Math.abs(r.x - 10) < 0.01 && Math.abs(r.w - d.inner) < 0.01)) {
		await p.mouse.move(d.left + r.x + 20, d.top + r.y + 7);
		if ((await text(p, "#details")).startsWith(`Function: ${f} (`))
			full.push(r);
	}
	check(full.length === 2, `${name}: the sandwich of ${f} draws it twice, full width (${full.length})`);
	const [fa, fb] = full.sort((a, b) => a.y - b.y);
	const row = (y) => d.rects.filter((r) => Math.round(r.y) === Math.round(y));
	const read = async (rects) => {
		const got = new Map();
		for (const r of rects) {
			await p.mouse.move(d.left + r.x + r.w / 2, d.top + r.y + 7);
			const t = await text(p, "#details"), mm = /^Function: (.*) \(([0-9,]+) samples, /.exec(t);
			if (mm)
				got.set(mm[1], Number(mm[2].replace(/,/g, "")));
		}
		return got;
	};
	// those wide enough to point at (1.5 pixels), each with its count
	const drawn = (mp) => new Map([...mp].filter(([, v]) => v / want.total * d.inner >= 1.5));
	const same = (a, b) => (b = drawn(b), a.size === b.size && [...a].every(([k, v]) => b.get(k) === v));
	const fmt = (mp) => JSON.stringify([...mp].sort()).slice(0, 300);
	const wide = (rects) => rects.filter((r) => r.w >= 1.5);
	const callers = await read(wide(row(fa.y - 16))), callees = await read(wide(row(fb.y + 16)));
	const count = (mp) => [...mp.values()].filter((v) => v / want.total * d.inner >= 0.1).length;
	check(row(fa.y - 16).length === count(want.callers) && row(fb.y + 16).length === count(want.callees),
	      `${name}: as many callers and callees drawn as are 0.1 pixels wide (${row(fa.y - 16).length}, ${row(fb.y + 16).length})`);
	check(same(callers, want.callers), `${name}: ${f}'s ${drawn(want.callers).size} callers drawn, each with its samples` +
	      (same(callers, want.callers) ? "" : `: ${fmt(callers)}, expected ${fmt(drawn(want.callers))}`));
	check(same(callees, want.callees), `${name}: ${f}'s ${drawn(want.callees).size} callees drawn, each with its samples` +
	      (same(callees, want.callees) ? "" : `: ${fmt(callees)}, expected ${fmt(drawn(want.callees))}`));
	await p.mouse.move(d.left + fa.x + 20, d.top + fa.y + 7);
	check(await text(p, "#details") === `Function: ${f} (${commas(want.total)} samples, ${pct(want.total, m.total)}%)`,
	      `${name}: ${f} itself has the samples of every stack it is in (${want.total})`);
	// widths are shares of f's samples
	const scale = d.inner / want.total;
	const widthsOk = row(fa.y - 16).every((r) => [...want.callers.values()].some((v) => Math.abs(v * scale - r.w) < 0.01));
	check(widthsOk, `${name}: each caller is as wide as its share of ${f}'s samples`);
	// back to the graph, and in again by Shift+click
	await p.click("#sandwich");
	await settle(p);
	check(!/sandwich=/.test(await p.evaluate(() => location.search)) &&
	      (await p.$eval("#sandwich", (b) => b.textContent)) === "Sandwich", `${name}: the Flame Graph button leaves the sandwich`);
	const d2 = await drawing(p), y0 = rootRow(d2, true);
	const e = expectView(m, 0, d2.inner, 0.1).filter((e) => shown(m.frames[e.i].name) === f)
		.sort((a, b) => b.w - a.w)[0];
	if (!e || e.w < 2) {
		console.log(`note ${name}: no frame of ${f} wide enough to Shift+click`);
		await p.close();
		return;
	}
	const c = centerOf(d2, m, e, true, 16, y0);
	await p.keyboard.down("Shift");
	await p.mouse.click(c.x, c.y);
	await p.keyboard.up("Shift");
	await settle(p);
	check(new URLSearchParams(await p.evaluate(() => location.search)).get("sandwich") === f,
	      `${name}: Shift+click opens the sandwich of the frame's function`);
	await p.close();
}

// fold2svg's colours for a differential graph, computed here: the change
// (self, or with --diff=total the width less the first counts of every
// stack through the frame, the largest over the frames fold2svg draws),
// palette_delta()'s hues; "--" grey, new frames purple with --mark-new.
function diffColours(m, total, markNew) {
	const change = (f) => (total ? f.width - f.base : f.delta);
	let max = m.maxdelta;
	if (total) {
		max = 1;
		const minCount = 0.1 / (1180 / m.total);
		for (const f of m.frames)
			if (f.width >= minCount)
				max = Math.max(max, Math.abs(change(f)));
	}
	return m.frames.map((f) => {
		if (f.name === "--")
			return hex(160, 160, 160);
		if (markNew && f.base === 0)
			return hex(190, 130, 240);
		const d = change(f);
		let r = 255, g = 255, b = 255;
		if (d > 0)
			g = b = Math.trunc(210 * (max - d) / max);
		else if (d < 0)
			r = g = Math.trunc(210 * (max + d) / max);
		return hex(r, g, b);
	});
}

async function checkDiff(name, total, markNew, normalize) {
	const m = flow(readFolded(path.join(dir, name + ".folded"), 2));
	const all = svgFrames(path.join(dir, name + ".all.svg")), svg = svgFrames(path.join(dir, name + ".svg"));
	let want = all.map((s) => s.fill);
	if (!normalize) {
		want = diffColours(m, total, markNew);
		check(want.every((c, k) => c === all[k].fill), `${name}: the model's colours are fold2svg's`);
	}
	const p = await open(name);
	const d = await drawing(p), y0 = rootRow(d, true), root = expectView(m, 0, d.inner, 0.1);
	compare(`${name} (differential colours)`, d, m, root, true, want, 16);
	// each title says the change, as fold2svg's SVG does
	let bad = [];
	for (const e of root.filter((e) => e.w >= 3)) {
		const c = centerOf(d, m, e, true, 16, y0);
		await p.mouse.move(c.x, c.y);
		const t = await text(p, "#details"), s = svg.find((s) => s.title.startsWith(shown(m.frames[e.i].name) + " (") &&
			Math.abs(s.width - e.w * 1180 / d.inner) < 0.2);
		if (!s || t !== "Function: " + s.title)
			bad.push(`${t} / ${s && s.title}`);
	}
	check(bad.length === 0, `${name}: every frame's title is fold2svg's${bad.length ? ": " + bad.slice(0, 3).join("; ") : ""}`);
	await p.close();
}

async function checkUnits() {
	const m = flow(readFolded(path.join(dir, "ns.folded"), 1));
	const p = await open("ns");
	const d = await drawing(p), y0 = rootRow(d, true);
	const tipOf = async (nm) => {
		const e = expectView(m, 0, d.inner, 0.1).find((e) => m.frames[e.i].name === nm);
		const c = centerOf(d, m, e, true, 16, y0);
		await p.mouse.move(c.x, c.y);
		return (await text(p, "#tooltip")).split("\n");
	};
	let t = await tipOf("work");
	check(t[1] === `3.49 s (3,487,654,321 ns), ${pct(3487654321, m.total)}% of all`,
	      `ns: work's tooltip shows seconds and the exact count: ${JSON.stringify(t[1])}`);
	t = await tipOf("srv");
	check(t[1].startsWith("3.49 s (3,488,888,930 ns)"), `ns: srv in seconds: ${JSON.stringify(t[1])}`);
	const p2 = await open("ns", "?s=accept");
	check(await waitMatched(p2) === `Matched: ${pct(1234567, m.total)}% (1.23 ms (1,234,567 ns))`,
	      `ns: the search's share in milliseconds: ${JSON.stringify(await search(p2))}`);
	await p.close();
	await p2.close();
}

async function checkOptions() {
	// --inverted: an icicle graph from the start; --title; fold2svg's
	// java palette with --hash; its ?x=&y= are fold2svg's icicle places
	const m = flow(readFolded(path.join(dir, "sample.folded"), 1));
	const all = svgFrames(path.join(dir, "java.all.svg")), svg = svgFrames(path.join(dir, "java.svg"));
	const p = await open("java");
	let d = await drawing(p);
	compare("java (--inverted --colors=java --hash)", d, m, expectView(m, 0, d.inner, 0.1), false, all.map((s) => s.fill), 16);
	check(await text(p, "#title") === "Java view" && await p.title() === "Java view", "java: --title is the page's title");
	const s = svg.find((s) => s.title.startsWith("beta "));
	const q = await open("java", `?x=${s.x}&y=${s.y}`);
	d = await drawing(q);
	compare("java opened from fold2svg's icicle link to beta", d, m,
		expectView(m, m.frames.find((f) => f.name === "beta").index, d.inner, 0.1), false, all.map((s) => s.fill), 16);
	await p.close();
	await q.close();
}

// A regex that runs for minutes on one name is stopped in its worker
// (which the page's Content-Security-Policy must let it start): the page
// answers, and stays responsive.
async function checkSlowSearch() {
	const p = await open("slow", "?s=" + encodeURIComponent("(a*)*$b"));
	const got = await waitMatched(p);
	check(got === "Search stopped after 2 s: the regex is too slow", `slow: a runaway regex is stopped: ${JSON.stringify(got)}`);
	await p.fill("#term", "^b$");
	await p.press("#term", "Enter");
	check(await waitMatched(p) === "Matched: 50.00% (5 samples)", "slow: the next search works");
	await p.close();
}

async function checkDark() {
	const light = await open("sample"), dark = await open("sample", "", { dark: true });
	const style = (p) => p.evaluate(() => {
		const s = getComputedStyle(document.body);
		return { color: s.color, bg: getComputedStyle(document.documentElement).getPropertyValue("--bg1").trim() };
	});
	const a = await style(light), b = await style(dark);
	const lum = (c) => c.match(/\d+/g).slice(0, 3).reduce((x, y) => x + Number(y), 0);
	check(lum(a.color) < 100 && lum(b.color) > 500 && a.bg !== b.bg,
	      `dark scheme: light text on a dark background when the system asks (${JSON.stringify([a, b])})`);
	await light.close();
	await dark.close();
}

async function main() {
	const browser = await launch();
	ctx = browser.ctx;
	try {
		await ctx.addInitScript(hook);
		const sample = await checkGraph("sample", {});
		const Zs = await checkZoomAndUrl("sample", sample);
		await checkSearch("sample", sample, Zs, [["work", ""], ["^W", "i"], ["alpha|idle", ""], ["l", ""]]);
		await checkIcicle("sample", sample);
		await checkSandwich("sample", sample, "work");

		const server = await checkGraph("server", {});
		const Z = await checkZoomAndUrl("server", server);
		await checkSearch("server", server, Z, [["memcpy", ""], ["lock", ""], ["^DB::", ""], ["PARSE", "i"]]);
		await checkSandwich("server", server, "memcpy");
		await checkSandwich("server", server, "start_thread");

		await checkDiff("diff", false, false, false);
		await checkDiff("difftotal", true, true, false);
		await checkDiff("diffnorm", true, true, true);
		await checkUnits();
		await checkOptions();
		await checkDark();
		await checkSlowSearch();
		const errors = pages.flatMap((p) => p.errors);
		check(errors.length === 0, `no page raised an error${errors.length ? ": " + errors.slice(0, 3).join("; ") : ""}`);
	} finally {
		await browser.close();
	}
	console.log(failures ? `${failures} checks FAILED` : "all checks passed");
	process.exit(failures ? 1 : 0);
}

main().catch((e) => {
	console.error("check-html FAILED: " + e.stack);
	process.exit(1);
});
