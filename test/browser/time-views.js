// time-views.js RUNS REGEX HTML SVG FOLDED SPEEDSCOPE_JSON — make bench's
// browser figures for one profile (bench/html.bench): how long headless
// Chromium takes to open fold2html's page, fold2svg's SVG and speedscope
// (the npm package's app, given the folded file as users drop it, and
// fold2speedscope's JSON) until the graph is drawn, and how long the
// page's and the SVG's searches for REGEX take to answer.  Each figure is
// the median of RUNS fresh tabs; a view that fails or takes more than two
// minutes says so.  Only make bench runs this: timings belong in benches.
// Exit 0, 1 on an error, 3 when Chromium cannot start.
"use strict";
const fs = require("fs");
const path = require("path");
const { launch } = require("./launch");

const [runs, regex, html, svg, folded, ssjson] = process.argv.slice(2);
const RUNS = Number(runs);
const APP = path.join(__dirname, "node_modules/speedscope/dist/release");
const ORIGIN = "http://speedscope.invalid";
const LIMIT = 120000;

const median = (v) => v.slice().sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];
const frame = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

async function tab(ctx) {
	const page = await ctx.newPage();
	await page.setViewportSize({ width: 1280, height: 900 });
	page.errors = [];
	page.on("pageerror", (e) => page.errors.push(String(e).slice(0, 200)));
	// a tab that dies (out of memory) ends the wait at once
	page.crashed = new Promise((_, reject) => page.on("crash", () => {
		page.didCrash = true;
		reject(new Error("the tab crashed (out of memory?)"));
	}));
	page.crashed.catch(() => {});
	return page;
}

const until = (page, p) => Promise.race([p, page.crashed]).catch((e) => {
	throw page.didCrash || /has been closed/.test(e.message)
		? new Error("its tab died while loading (the renderer crashed: out of memory?)") : e;
});

// Closes a browser, or gives up after a while (Playwright kills what it
// started when this process exits).
const close = (b) => Promise.race([b.close().catch(() => {}),
				   new Promise((r) => setTimeout(r, 20000))]);

// fold2html: to the first drawing, then a search typed in its field
async function timeHtml(ctx) {
	const open = [], search = [];
	let answer = "";
	for (let i = 0; i < RUNS; i++) {
		const page = await tab(ctx);
		let t = Date.now();
		await page.goto("file://" + path.resolve(html), { timeout: LIMIT });
		await until(page, page.waitForSelector("html[data-ready]", { timeout: LIMIT }));
		await frame(page);
		open.push(Date.now() - t);
		await page.fill("#term", regex);
		t = Date.now();
		await page.press("#term", "Enter");
		await page.waitForFunction(() => /^(Matched|Invalid|Search stopped)/.test(
			document.getElementById("matched").textContent), null, { timeout: LIMIT, polling: 5 });
		await frame(page);
		search.push(Date.now() - t);
		answer = await page.$eval("#matched", (e) => e.textContent);
		if (page.errors.length)
			throw new Error("fold2html page: " + page.errors.join("; "));
		await page.close();
	}
	return { open: median(open), search: median(search), answer };
}

// fold2svg: to the load event (its script indexes the frames then), and
// its search, asked through prompt()
async function timeSvg(ctx) {
	const open = [], search = [];
	let answer = "", frames = 0;
	for (let i = 0; i < RUNS; i++) {
		const page = await tab(ctx);
		let t = Date.now();
		await page.goto("file://" + path.resolve(svg), { timeout: LIMIT });
		await frame(page);
		open.push(Date.now() - t);
		frames = await page.$$eval("#frames > g", (gs) => gs.length);
		page.once("dialog", (d) => d.accept(regex));
		t = Date.now();
		await page.keyboard.press("Control+f");
		await page.waitForFunction(() => /^(Matched|Invalid|Search stopped)/.test(
			document.getElementById("matched").textContent), null, { timeout: LIMIT, polling: 5 });
		await frame(page);
		search.push(Date.now() - t);
		answer = await page.$eval("#matched", (e) => e.textContent);
		await page.close();
	}
	return { open: median(open), search: median(search), answer, frames };
}

// speedscope: its app loads the file from #profileURL= and sets the
// document's title to "NAME - speedscope" once it has drawn it
async function timeSpeedscope(ctx, file) {
	const open = [];
	for (let i = 0; i < RUNS; i++) {
		const page = await tab(ctx);
		await page.route(ORIGIN + "/**", (route) => {
			const u = new URL(route.request().url());
			if (u.pathname === "/input/" + path.basename(file))
				return route.fulfill({ path: file, contentType: "application/octet-stream" });
			const f = path.join(APP, path.normalize(u.pathname === "/" ? "/index.html" : u.pathname));
			if (!f.startsWith(APP) || !fs.existsSync(f))
				return route.fulfill({ status: 404, body: "" });
			const type = f.endsWith(".js") ? "text/javascript" : f.endsWith(".html") ? "text/html"
				: f.endsWith(".css") ? "text/css" : "application/octet-stream";
			return route.fulfill({ path: f, contentType: type });
		});
		const t = Date.now();
		await page.goto(ORIGIN + "/#profileURL=" + encodeURIComponent(ORIGIN + "/input/" + path.basename(file)),
				{ timeout: LIMIT });
		await until(page, page.waitForFunction(() => / - speedscope$/.test(document.title), null,
							{ timeout: LIMIT, polling: 20 }));
		await frame(page);
		open.push(Date.now() - t);
		if (page.errors.length)
			throw new Error("speedscope: " + page.errors.join("; "));
		await page.close();
	}
	return { open: median(open) };
}

async function main() {
	const browser = await launch();
	const say = (what, f) => f().then((r) => r, (e) => ({ error: String(e.message || e).split("\n")[0] }));
	try {
		const h = await say("html", () => timeHtml(browser.ctx));
		const s = await say("svg", () => timeSvg(browser.ctx));
		const alone = async (file) => {
			const b = await launch();
			try {
				return await timeSpeedscope(b.ctx, file);
			} finally {
				await close(b);
			}
		};
		const sf = await say("ss", () => alone(folded));
		const sj = await say("ssj", () => alone(ssjson));
		const row = (label, r, extra) => console.log(r.error ? `${label.padEnd(34)} failed: ${r.error}` :
			`${label.padEnd(34)} open ${String(r.open).padStart(6)} ms` +
			(r.search !== undefined ? `   search ${String(r.search).padStart(5)} ms: ${r.answer}` : "") + (extra || ""));
		row("fold2html page (every frame)", h);
		row(`fold2svg SVG (${s.frames || "?"} frames drawn)`, s);
		row("speedscope, the folded file", sf);
		row("speedscope, fold2speedscope's JSON", sj);
	} finally {
		await close(browser);
	}
}

main().then(() => process.exit(0), (e) => {
	console.error("time-views: " + e.stack);
	process.exit(1);
});
