// launch.js — the one place the browser tests start headless Chromium
// (Debian's /usr/bin/chromium, driven by playwright-core), so every test
// runs it with the same arguments and fails the same way when it cannot.
//
//	const { launch } = require("./launch");
//	const browser = await launch();	// exits 3 if Chromium cannot start
//	const page = await browser.ctx.newPage();
//	...
//	await browser.close();		// also removes the profile directory
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const EXECUTABLE = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
	      "--disable-background-networking"];

// Exit status 3 tells the calling script that Chromium, not the SVG, failed.
async function launch() {
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), "fold2svg-chromium-"));
	let ctx;
	try {
		ctx = await chromium.launchPersistentContext(profile, {
			executablePath: EXECUTABLE, headless: true, args: ARGS,
			timeout: 0,
		});
	} catch (e) {
		fs.rmSync(profile, { recursive: true, force: true });
		console.error("browser test FAILED: Chromium could not start: " + e.message);
		process.exit(3);
	}
	// No action of a test has a time limit: on a loaded machine a page may
	// take minutes, and a hang is the calling script's `timeout` to catch.
	ctx.setDefaultTimeout(0);
	ctx.setDefaultNavigationTimeout(0);
	return {
		ctx,
		async close() {
			await ctx.close();
			fs.rmSync(profile, { recursive: true, force: true });
		},
	};
}

module.exports = { launch, EXECUTABLE, ARGS };
