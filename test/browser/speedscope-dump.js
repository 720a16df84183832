// speedscope-dump.js FILE... — loads each FILE with speedscope's own
// importer (the npm package's app, in headless Chromium) and prints what
// speedscope made of it, so tests can compare it with what they expect:
//
//	file NAME                       the file's base name
//	group NAME<TAB>PROFILES<TAB>ACTIVE
//	profile NAME<TAB>UNIT<TAB>TOTAL<TAB>FRAMES<TAB>SAMPLES
//	STACK<TAB>WEIGHT                one line per sample, in speedscope's
//	                                order, frames root first joined by ';'
//
// TOTAL is the profile's total weight, FRAMES the distinct frames its
// samples use, SAMPLES the samples speedscope kept (it drops zero weights
// and merges a sample into the previous one when their stacks are equal).
// With --no-samples the sample lines are left out; with --frames each
// frame used is printed as "frame NAME<TAB>FILE<TAB>LINE" after its
// profile line.  speedscope picks the importer itself, from the bytes (a
// pprof profile) or the JSON's $schema, exactly as when a user drops the
// file on its page.  Exit 0 when every file loaded, 1 when one did not
// (speedscope's error is printed), 3 when Chromium cannot start.
"use strict";
const fs = require("fs");
const path = require("path");
const { launch } = require("./launch");

const args = process.argv.slice(2);
const samples = !args.includes("--no-samples");
const withFrames = args.includes("--frames");
const files = args.filter((a) => !a.startsWith("--"));
const APP = path.join(__dirname, "node_modules/speedscope/dist/release");
const ORIGIN = "http://speedscope.invalid";

// speedscope's bundle keeps its importer module private; this exposes it
// as window.__speedscopeImport, next to the function the app itself calls
// with dropped files.  If a new release changes that code, say so.
function hookBundle(js) {
	const re = /(async function [\w$]+\(([\w$]+),([\w$]+)\)\{return\(await ([\w$]+)\)\.importProfileGroupFromText\(\2,\3\)\})/;
	if (!re.test(js)) {
		console.error("speedscope-dump: cannot find the importer in speedscope's bundle (a new release?)");
		process.exit(1);
	}
	return js.replace(re, "$1;window.__speedscopeImport=$4;");
}

async function main() {
	const browser = await launch();
	let status = 0;
	try {
		const page = await browser.ctx.newPage();
		await page.route(ORIGIN + "/**", (route) => {
			const u = new URL(route.request().url());
			if (u.pathname.startsWith("/input/")) {
				const i = Number(u.pathname.slice(7));
				return route.fulfill({ body: fs.readFileSync(files[i]),
					contentType: "application/octet-stream" });
			}
			const f = path.join(APP, path.normalize(u.pathname === "/" ? "/index.html" : u.pathname));
			if (!f.startsWith(APP) || !fs.existsSync(f))
				return route.fulfill({ status: 404, body: "" });
			let body = fs.readFileSync(f);
			if (/^speedscope-.*\.js$/.test(path.basename(f)))
				body = hookBundle(body.toString("utf8"));
			const type = f.endsWith(".js") ? "text/javascript" : f.endsWith(".html") ? "text/html"
				: f.endsWith(".css") ? "text/css" : "application/octet-stream";
			return route.fulfill({ body, contentType: type });
		});
		await page.goto(ORIGIN + "/");
		await page.waitForFunction(() => window.__speedscopeImport !== undefined);
		for (let i = 0; i < files.length; i++) {
			const r = await page.evaluate(async ({ i, name, samples, withFrames }) => {
				const imp = await window.__speedscopeImport;
				const buf = await (await fetch("/input/" + i)).arrayBuffer();
				let g;
				try {
					g = await imp.importProfilesFromArrayBuffer(name, buf);
				} catch (e) {
					return { error: String(e && e.stack || e) };
				}
				if (!g)
					return { error: "speedscope did not recognise the file" };
				const out = [`group ${g.name}\t${g.profiles.length}\t${g.indexToView}`];
				for (const p of g.profiles) {
					let nframes = 0;
					const frames = [];
					p.forEachFrame((f) => {
						nframes++;
						if (withFrames)
							frames.push(`frame ${f.name}\t${f.file === undefined ? "" : f.file}\t${f.line === undefined ? "" : f.line}`);
					});
					out.push(`profile ${p.getName()}\t${p.getWeightUnit()}\t${p.getTotalWeight()}\t${nframes}\t${p.samples.length}`);
					out.push(...frames);
					if (!samples)
						continue;
					for (let k = 0; k < p.samples.length; k++) {
						const names = [];
						for (let n = p.samples[k]; n && n.parent; n = n.parent)
							names.push(n.frame.name);
						out.push(names.reverse().join(";") + "\t" + p.weights[k]);
					}
				}
				return { lines: out };
			}, { i, name: path.basename(files[i]), samples, withFrames });
			console.log("file " + path.basename(files[i]));
			if (r.error) {
				console.log("error " + r.error.split("\n")[0]);
				console.error(`speedscope-dump: ${files[i]}: speedscope failed: ${r.error}`);
				status = 1;
				continue;
			}
			for (const l of r.lines)
				console.log(l);
		}
	} finally {
		await browser.close();
	}
	process.exit(status);
}

main().catch((e) => { console.error("speedscope-dump: " + (e && e.stack || e)); process.exit(1); });
