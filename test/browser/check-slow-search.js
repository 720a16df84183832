// check-slow-search.js SVG — a search regex that would run for minutes on
// one frame name ("(a*)*$b" on "aaa...a", given in the URL as ?s=) does not
// freeze the page: it is stopped, the SVG says so, the page answers while
// it runs, and the next search works.  Exit 0 pass, 1 fail, 3 when Chromium
// cannot start.
"use strict";
const path = require("path");
const { launch } = require("./launch");

const [svgPath] = process.argv.slice(2);
const url = "file://" + path.resolve(svgPath);
let failures = 0;
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
		page.on("dialog", (d) => d.accept(page.nextAnswer || ""));
		const matched = () => page.$eval("#matched", (e) => e.textContent);

		// (a page that runs the regex itself never finishes loading)
		await page.goto(url + "?s=" + encodeURIComponent("(a*)*$b"), { timeout: 0 });
		// while the regex runs, the page still answers: a page that ran
		// it itself would answer only after it, no longer "Searching"
		const busy = await page.evaluate(() => document.getElementById("matched").textContent);
		check(busy.startsWith("Searching"), `the page answers during the search: '${busy}'`);
		await page.waitForFunction(() => /^Search stopped/.test(
			document.getElementById("matched").textContent), null, { timeout: 0 })
			.catch(() => {});
		const said = await matched();
		check(/^Search stopped after \d+ s: the regex is too slow$/.test(said),
		      `the SVG says the search was stopped: '${said}'`);
		check(await page.$$eval("#frames rect", (rs) => rs.every((r) => r.getAttribute("fill") !== "rgb(230,0,230)")),
		      "no frame is left highlighted");
		check(!/[?&]s=/.test(page.url()), "the stopped search is not kept in the URL");

		// the next search works (in a new worker)
		page.nextAnswer = "^b$";
		await page.click("#search");
		await page.waitForFunction(() => /^Matched/.test(
			document.getElementById("matched").textContent), null, { timeout: 0 })
			.catch(() => {});
		check(await matched() === "Matched: 50.0%", `then a search for ^b$ matches 50.0%: '${await matched()}'`);
		check(errors.length === 0, "no script errors" + (errors.length ? ": " + errors.join("; ") : ""));
	} finally {
		await browser.close();
	}
	process.exit(failures ? 1 : 0);
}
main().catch((e) => { console.error("browser test FAILED: " + e.stack); process.exit(1); });
