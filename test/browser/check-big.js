// check-big.js SVG MIN_FRAMES — a large graph works: it draws its frames,
// zooming labels a frame too narrow for one, a search answers, no script
// errors.  The time loading, zooming, searching and resetting take (with the
// style and layout they cause) is printed; only when LIMIT_MS is set (by
// make bench, never by make check: a timed test fails on a loaded machine)
// must each stay under it (loading under three times it).
// Exit 0 pass, 1 fail, 3 when Chromium cannot start.
"use strict";
const path = require("path");
const { launch } = require("./launch");

const [svgPath, minFrames] = process.argv.slice(2);
const LIMIT = process.env.LIMIT_MS ? Number(process.env.LIMIT_MS) : null;
let failures = 0;
function timing(ms, limit, what) {
	if (limit === null)
		console.log(`time ${what} in ${ms.toFixed(0)} ms`);
	else
		check(ms < limit, `${what} in ${ms.toFixed(0)} ms (limit ${limit})`);
}
function check(ok, what) {
	console.log((ok ? "ok   " : "FAIL ") + what);
	if (!ok)
		failures++;
}

async function main() {
	const browser = await launch(), ctx = browser.ctx;
	try {
		const page = await ctx.newPage();
		const errors = [];
		page.on("pageerror", (e) => errors.push(String(e)));
		const t0 = Date.now();
		await page.goto("file://" + path.resolve(svgPath));
		const loadMs = Date.now() - t0;
		const n = await page.$$eval("#frames > g", (gs) => gs.length);
		check(n >= Number(minFrames), `the graph draws ${n} frames (at least ${minFrames})`);
		timing(loadMs, LIMIT && LIMIT * 3, "opens and indexes them");
		const t = await page.evaluate(() => {
			function timed(f) {
				const s = performance.now();
				f();
				document.documentElement.getBoundingClientRect();	// include style and layout
				return performance.now() - s;
			}
			const gs = document.querySelectorAll("#frames > g");
			const click = (g) => g.dispatchEvent(new MouseEvent("click", { bubbles: true }));
			return {
				unlabelled: !gs[1].querySelector("text"),
				zoom: timed(() => click(gs[1])),
				label: (gs[1].querySelector("text") || {}).textContent,
				title: gs[1].querySelector("title").textContent,
				zoomDeep: timed(() => click(gs[Math.floor(gs.length / 2)])),
				reset: timed(() => document.getElementById("unzoom").dispatchEvent(new MouseEvent("click", { bubbles: true }))),
			};
		});
		// the search answers from a worker: time it to the answer shown
		Object.assign(t, await page.evaluate(() => new Promise((resolve) => {
			const m = document.getElementById("matched"), s = performance.now();
			window.prompt = () => "^f1";
			document.dispatchEvent(new KeyboardEvent("keydown", { key: "f", ctrlKey: true, bubbles: true }));
			(function poll() {
				if (/^(Matched|Invalid|Search stopped)/.test(m.textContent)) {
					document.documentElement.getBoundingClientRect();
					resolve({ search: performance.now() - s, matched: m.textContent });
				} else {
					setTimeout(poll, 5);
				}
			})();
		})));
		check(t.unlabelled && t.title.startsWith(t.label + " ("),
		      `a frame too narrow for a label gets one when zoomed: '${t.label}'`);
		for (const k of ["zoom", "zoomDeep", "reset", "search"])
			timing(t[k], LIMIT, k);
		check(/^Matched: \d/.test(t.matched), "the search reports " + t.matched);
		check(errors.length === 0, "no script errors" + (errors.length ? ": " + errors.join("; ") : ""));
	} finally {
		await browser.close();
	}
	process.exit(failures ? 1 : 0);
}
main().catch((e) => { console.error("browser test FAILED: " + e.stack); process.exit(1); });
