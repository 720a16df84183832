// check-svg.js FOLDED SVG — drives headless Chromium (playwright-core) over a
// fold2svg SVG opened from a file:// URL and checks its interactive script.
// Expected values come from the folded input and the SVG itself, never from
// numbers written here.  Exit 0 when every check passes, 1 otherwise, 3 when
// Chromium cannot start.
"use strict";
const fs = require("fs");
const path = require("path");
const { launch } = require("./launch");

const [folded, svgPath] = process.argv.slice(2);
const stacks = fs.readFileSync(folded, "utf8").split("\n").filter(Boolean).map((l) => {
	const m = /^(.*) (\d+)$/.exec(l);
	return { frames: m[1].split(";"), count: Number(m[2]) };
});
const total = stacks.reduce((a, s) => a + s.count, 0);
const url = "file://" + path.resolve(svgPath);
let failures = 0;

function check(ok, what) {
	console.log((ok ? "ok   " : "FAIL ") + what);
	if (!ok)
		failures++;
}

// the share of samples in stacks with a frame matching re, each counted once
function expectedPct(re) {
	const hit = stacks.filter((s) => s.frames.some((f) => re.test(f)));
	return (100 * hit.reduce((a, s) => a + s.count, 0) / total).toFixed(1) + "%";
}

async function frames(page) {
	return page.$$eval("#frames > g", (gs) => gs.map((g) => {
		const r = g.querySelector("rect");
		return {
			title: g.querySelector("title").textContent,
			cls: g.getAttribute("class") || "",
			x: r.getAttribute("x"), y: r.getAttribute("y"),
			width: r.getAttribute("width"), fill: r.getAttribute("fill"),
			label: (g.querySelector("text") || { textContent: "" }).textContent,
			shown: getComputedStyle(g).display !== "none",
		};
	}));
}

// The search runs in a worker: wait for its answer (or its refusal).
async function searched(page) {
	await page.waitForFunction(() => /^(Matched|Invalid|Search stopped)/.test(
		document.getElementById("matched").textContent), null, { timeout: 0 });
}

function named(list, name) {
	return list.filter((f) => f.title.startsWith(name + " ("));
}

async function main() {
	const browser = await launch(), ctx = browser.ctx;
	try {
		const page = await ctx.newPage();
		const errors = [];
		page.on("pageerror", (e) => errors.push(String(e)));
		page.on("dialog", (d) => d.accept(page.nextAnswer || ""));

		await page.goto(url);
		let before = await frames(page);
		const width = await page.$eval("svg", (s) => Number(s.getAttribute("width")));
		const full = (width - 20).toFixed(1);
		const target = before.find((f) => f.title.startsWith("beta ("));
		check(target && target.width !== full, "frame 'beta' is narrower than the graph");

		// the Search and ic controls are plainly visible: fully opaque,
		// dark on the light background, and "ic" shows when it is on
		const look = (sel) => page.$eval(sel, (e) => {
			const st = getComputedStyle(e), rgb = st.fill.match(/\d+/g).map(Number);
			return { opacity: Number(st.opacity), weight: st.fontWeight, fill: st.fill,
				 luma: (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255 };
		});
		for (const sel of ["#search", "#ignorecase"]) {
			const l = await look(sel);
			check(l.opacity === 1 && l.luma < 0.4, `${sel} is opaque and dark (opacity ${l.opacity}, luma ${l.luma.toFixed(2)})`);
		}
		const icOff = await look("#ignorecase");
		await page.click("#ignorecase");
		const icOn = await look("#ignorecase");
		await page.click("#ignorecase");
		check(icOn.fill !== icOff.fill && icOn.weight !== icOff.weight, "ic looks different when it is on");

		// click-to-zoom
		await page.click(`#frames > g:has(title:text-matches("^beta \\\\("))`);
		let after = await frames(page);
		const zt = named(after, "beta")[0];
		check(zt.width === full, `clicked 'beta' widens to ${full} (got ${zt.width})`);
		check(named(after, "main")[0].cls.includes("parent"), "its ancestor 'main' is dimmed");
		check(!named(after, "alpha")[0].shown && !named(after, "other")[0].shown, "the unrelated 'alpha' and 'other' are hidden");
		check(named(after, "work").filter((f) => f.shown).length === 2, "the two 'work' frames under 'beta' are shown");
		check(!/hide/.test(await page.$eval("#unzoom", (e) => e.getAttribute("class") || "")),
		      "Reset Zoom is shown");
		check(/[?&]x=/.test(page.url()) && /[?&]y=/.test(page.url()), "the zoom is kept in the URL");

		// Reset Zoom restores every frame
		await page.click("#unzoom");
		after = await frames(page);
		check(JSON.stringify(after.map((f) => [f.x, f.width, f.cls, f.shown, f.label])) ===
		      JSON.stringify(before.map((f) => [f.x, f.width, f.cls, f.shown, f.label])),
		      "Reset Zoom restores every frame's place");

		// Escape also unzooms
		await page.click(`#frames > g:has(title:text-matches("^alpha \\\\("))`);
		await page.keyboard.press("Escape");
		after = await frames(page);
		check(named(after, "alpha")[0].width === named(before, "alpha")[0].width,
		      "Escape resets the zoom");

		// search through the Search button's prompt
		page.nextAnswer = "work";
		await page.click("#search");
		await searched(page);
		after = await frames(page);
		const hits = after.filter((f) => f.fill === "rgb(230,0,230)").map((f) => f.title);
		const want = before.filter((f) => /work/.test(f.title.replace(/ \(.*$/, ""))).map((f) => f.title);
		check(hits.length > 0 && JSON.stringify(hits) === JSON.stringify(want),
		      `search 'work' highlights exactly the ${want.length} 'work' frames`);
		check(await page.$eval("#matched", (e) => e.textContent) === "Matched: " + expectedPct(/work/),
		      "Matched shows " + expectedPct(/work/));

		// nested matches are not counted twice
		page.nextAnswer = "^(main|work)$";
		await page.click("#search");	// resets the search
		await page.keyboard.press("Control+f");
		await searched(page);
		check(await page.$eval("#matched", (e) => e.textContent) ===
		      "Matched: " + expectedPct(/^(main|work)$/),
		      "nested matches count once: " + expectedPct(/^(main|work)$/));

		// case-insensitive toggle
		await page.click("#search");
		page.nextAnswer = "WORK";
		await page.click("#ignorecase");
		await page.keyboard.press("Control+f");
		await searched(page);
		check(await page.$eval("#matched", (e) => e.textContent) === "Matched: " + expectedPct(/work/i),
		      "the ic toggle makes the search case-insensitive");

		// ?s= restores a search on load; ?x=&y= a zoom
		const b = named(before, "beta")[0];
		await page.goto(url + "?s=" + encodeURIComponent("idle") + "&x=" + b.x + "&y=" + b.y);
		await searched(page);
		after = await frames(page);
		check(await page.$eval("#matched", (e) => e.textContent) === "Matched: " + expectedPct(/idle/),
		      "?s=idle restores the search");
		check(after.filter((f) => f.fill === "rgb(230,0,230)").every((f) => f.title.startsWith("idle (")) &&
		      after.some((f) => f.fill === "rgb(230,0,230)"), "and highlights the 'idle' frames");
		check(named(after, "beta")[0].width === full, "?x=&y= restores the zoom");

		// hover details
		await page.hover(`#frames > g:has(title:text-matches("^main \\\\("))`);
		const det = await page.$eval("#details", (e) => e.textContent);
		check(det.startsWith("Function: main ("), "hovering shows the frame's details");

		check(errors.length === 0, "no script errors" + (errors.length ? ": " + errors.join("; ") : ""));
	} finally {
		await browser.close();
	}
	process.exit(failures ? 1 : 0);
}

main().catch((e) => {
	console.error("browser test FAILED: " + e.stack);
	process.exit(1);
});
