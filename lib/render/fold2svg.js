// fold2svg's interactive script, embedded in every SVG it writes (see the
// Makefile's fold2svg block).  fold2svg defines fg_config just before this.
//
// The frames are read from the document once into flat arrays; zooming and
// searching then only write attributes (never read layout), and a zoom
// touches only the frames it shows (a class on #frames hides the rest), so
// graphs of 50,000+ frames stay responsive.
// The frames come in pre-order (each parent before its children, children
// left to right), so a frame's descendants are the frames right after it
// with a greater depth.
"use strict";
(function () {
	var cfg = fg_config;
	var SEARCH_FILL = "rgb(230,0,230)";
	var SVGNS = "http://www.w3.org/2000/svg";
	var frameGroup = document.getElementById("frames");
	var details = document.getElementById("details");
	var unzoomBtn = document.getElementById("unzoom");
	var searchBtn = document.getElementById("search");
	var icBtn = document.getElementById("ignorecase");
	var matchedText = document.getElementById("matched");
	var xpad = cfg.xpad, inner = cfg.width - 2 * cfg.xpad;
	var charWidth = cfg.fontsize * cfg.fontwidth;
	var total = parseFloat(String(cfg.total).replace(/,/g, ""));

	var groups = [], rects = [], labels = [], titles = [], names = [];
	var origX, origW, curX, curW, depth, parent, samples, moved, fills;
	var shown = [], movedList = [];
	var xAttr = [], yAttr = [];
	var zoomed = -1, searchTerm = null, ignoreCase = false;

	function escapeRegex(s) {
		return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	}

	function setText(el, s) {
		if (el.textContent !== s)
			el.textContent = s;
	}

	function load() {
		var kids = frameGroup.children, n = kids.length, i;
		var suffix = new RegExp(" \\(([0-9][0-9,.]*) " + escapeRegex(cfg.countname) +
					", [^()]*\\)$");
		var lastAt = [], y0 = 0;

		origX = new Float64Array(n); origW = new Float64Array(n);
		curX = new Float64Array(n); curW = new Float64Array(n);
		depth = new Int32Array(n); parent = new Int32Array(n);
		samples = new Float64Array(n); moved = new Uint8Array(n);
		fills = new Array(n);
		for (i = 0; i < n; i++) {
			var g = kids[i], r = g.querySelector("rect");
			var title = g.querySelector("title").textContent;
			var m = suffix.exec(title), y;

			g.fgIndex = i;
			groups.push(g);
			rects.push(r);
			labels.push(g.querySelector("text"));
			titles.push(title);
			xAttr.push(r.getAttribute("x"));
			yAttr.push(r.getAttribute("y"));
			names.push(i === 0 ? "all" : m ? title.slice(0, m.index) : title);
			origX[i] = curX[i] = parseFloat(xAttr[i]);
			origW[i] = curW[i] = parseFloat(r.getAttribute("width"));
			fills[i] = r.getAttribute("fill");
			samples[i] = m ? parseFloat(m[1].replace(/,/g, "")) : origW[i] / inner * total;
			y = parseFloat(yAttr[i]);
			if (i === 0)
				y0 = y;
			depth[i] = Math.round(Math.abs(y - y0) / cfg.frameheight);
			parent[i] = depth[i] > 0 ? lastAt[depth[i] - 1] : -1;
			lastAt[depth[i]] = i;
		}
	}

	function label(i) {
		var fit = Math.floor(curW[i] / charWidth), name = names[i];

		if (fit < 3)
			return "";
		if (name.length <= fit)
			return name;
		// count characters, not UTF-16 units, as fold2svg does
		var chars = Array.from(name);
		return chars.length > fit ? chars.slice(0, fit - 2).join("") + ".." : name;
	}

	function setParams(change) {
		try {
			var p = new URLSearchParams(location.search), k;
			for (k in change) {
				if (change[k] === null)
					p.delete(k);
				else
					p.set(k, change[k]);
			}
			var q = p.toString();
			history.replaceState(null, "", location.pathname + (q ? "?" + q : "") + location.hash);
		} catch (e) {
			// some viewers forbid history changes (sandboxed or data: URLs)
		}
	}

	function setPos(i, x, w) {
		curX[i] = x;
		curW[i] = w;
		rects[i].setAttribute("x", x.toFixed(1));
		rects[i].setAttribute("width", w.toFixed(1));
		var text = label(i), t = labels[i];
		if (!t) {
			if (!text)
				return;
			// fold2svg leaves out the labels of frames too narrow for one
			t = labels[i] = document.createElementNS(SVGNS, "text");
			t.setAttribute("y", (parseFloat(yAttr[i]) + (cfg.frameheight - 1) / 2 + 3).toString());
			rects[i].parentNode.appendChild(t);
		}
		t.setAttribute("x", (x + 3).toFixed(1));
		setText(t, text);
	}

	// Moves frame i (shown, or about to be), remembering it for unzoom().
	function place(i, x, w) {
		if (x === curX[i] && w === curW[i])
			return;
		if (!moved[i]) {
			moved[i] = 1;
			movedList.push(i);
		}
		setPos(i, x, w);
	}

	// While zoomed, #frames has class "zoomed", which hides every frame
	// but those marked "in" (the zoomed frame and its descendants) or
	// "parent" (its ancestors, dimmed): a zoom touches only the frames it
	// shows and the ones the last zoom showed.
	function unmark() {
		for (var k = 0; k < shown.length; k++)
			groups[shown[k]].classList.remove("in", "parent");
		shown = [];
	}

	function mark(i, cls) {
		groups[i].classList.add(cls);
		shown.push(i);
	}

	function zoom(i) {
		var n = groups.length, j, end, ratio, x = origX[i];

		if (i <= 0)
			return unzoom();
		ratio = inner / origW[i];
		unmark();
		for (j = parent[i]; j >= 0; j = parent[j]) {
			mark(j, "parent");
			place(j, xpad, inner);
		}
		for (end = i; end < n && (end === i || depth[end] > depth[i]); end++) {
			mark(end, "in");
			place(end, xpad + (origX[end] - x) * ratio, origW[end] * ratio);
		}
		frameGroup.classList.add("zoomed");
		zoomed = i;
		unzoomBtn.classList.remove("hide");
		setParams({ x: xAttr[i], y: yAttr[i] });
	}

	function unzoom() {
		frameGroup.classList.remove("zoomed");
		unmark();
		for (var k = 0; k < movedList.length; k++) {
			var j = movedList[k];
			moved[j] = 0;
			setPos(j, origX[j], origW[j]);
		}
		movedList = [];
		zoomed = -1;
		unzoomBtn.classList.add("hide");
		setParams({ x: null, y: null });
	}

	// A regex can take exponential time on one name ("(a*)*$b"; a ?s= in
	// a link is anyone's to write), and a single RegExp.test() cannot be
	// interrupted: the names are matched in a worker thread, which is
	// stopped after SEARCH_MS, so the page never freezes.  Where no worker
	// can be started, the names are matched here, with the clock checked
	// between names (that cannot stop one runaway test).
	var SEARCH_MS = 2000;
	var WORKER_SRC = "var names = [];\n" +
		"onmessage = function (e) {\n" +
		"\tvar d = e.data, re, hit, i;\n" +
		"\tif (d.names) { names = d.names; return; }\n" +
		"\tpostMessage({ id: d.id, started: true });\n" +
		"\tre = new RegExp(d.term, d.flags);\n" +
		"\thit = new Uint8Array(names.length);\n" +
		"\tfor (i = 0; i < names.length; i++)\n" +
		"\t\thit[i] = re.test(names[i]) ? 1 : 0;\n" +
		"\tpostMessage({ id: d.id, hit: hit }, [hit.buffer]);\n" +
		"};\n";
	var worker = null, noWorker = false, busy = false, workerRan = false;
	var searchId = 0, searchTimer = null, pendingTerm = null;

	// Ends the search in progress, if any: its answer is dropped, and a
	// worker still matching is stopped (it might never finish).
	function cancelSearch() {
		searchId++;
		if (searchTimer !== null)
			clearTimeout(searchTimer);
		searchTimer = null;
		if (busy) {
			worker.terminate();
			worker = null;
			busy = false;
		}
	}

	function clearSearch() {
		cancelSearch();
		for (var j = 0; j < groups.length; j++)
			rects[j].setAttribute("fill", fills[j]);
		searchTerm = null;
		searchBtn.classList.remove("show");
		setText(searchBtn, "Search");
		setText(matchedText, " ");
		setParams({ s: null });
	}

	// Colours the frames hit[] marks and reports their share.
	function showHits(term, hit) {
		var n = groups.length, j, inside = new Uint8Array(n), sum = 0;

		for (j = 0; j < n; j++) {
			rects[j].setAttribute("fill", hit[j] ? SEARCH_FILL : fills[j]);
			// a match inside a matching frame is already counted in it
			if (parent[j] >= 0)
				inside[j] = inside[parent[j]] | hit[parent[j]];
			if (hit[j] && !inside[j])
				sum += samples[j];
		}
		searchTerm = term;
		searchBtn.classList.add("show");
		setText(searchBtn, "Reset Search");
		setText(matchedText, "Matched: " + (total > 0 ? 100 * sum / total : 0).toFixed(1) + "%");
		setParams({ s: term });
	}

	function searchStopped() {
		clearSearch();
		setText(matchedText, "Search stopped after " + SEARCH_MS / 1000 +
			" s: the regex is too slow");
	}

	function startWorker() {
		try {
			worker = new Worker(URL.createObjectURL(
				new Blob([WORKER_SRC], { type: "text/ecmascript" })));
		} catch (e) {
			noWorker = true;	// a viewer that allows no workers
			worker = null;
			return;
		}
		worker.onmessage = function (e) {
			var d = e.data;
			if (d.id !== searchId)
				return;
			if (d.started) {	// the clock runs while it matches
				workerRan = true;
				searchTimer = setTimeout(searchStopped, SEARCH_MS);
				return;
			}
			clearTimeout(searchTimer);
			searchTimer = null;
			busy = false;
			showHits(pendingTerm, d.hit);
		};
		worker.onerror = function (e) {
			var term = pendingTerm, was = busy;

			e.preventDefault();
			cancelSearch();
			if (worker)
				worker.terminate();
			worker = null;
			if (!workerRan) {	// it never loaded: match here instead
				noWorker = true;
				if (was)
					search(term);
			} else {
				setText(matchedText, "Invalid regex");
			}
		};
		worker.postMessage({ names: names });
	}

	function searchHere(term, re) {
		var n = groups.length, hit = new Uint8Array(n), t0 = Date.now();

		try {
			for (var j = 0; j < n; j++) {
				hit[j] = re.test(names[j]) ? 1 : 0;
				if ((j & 255) === 255 && Date.now() - t0 > SEARCH_MS)
					return searchStopped();
			}
		} catch (e) {	// a regex too complex for the engine
			setText(matchedText, "Invalid regex");
			return;
		}
		showHits(term, hit);
	}

	function search(term) {
		var flags = ignoreCase ? "i" : "", re;

		if (!term)
			return clearSearch();
		try {
			re = new RegExp(term, flags);	// compiling is quick and safe
		} catch (e) {
			setText(matchedText, "Invalid regex");
			return;
		}
		cancelSearch();
		if (!worker && !noWorker)
			startWorker();
		if (!worker)
			return searchHere(term, re);
		pendingTerm = term;
		busy = true;
		setText(matchedText, "Searching\u2026");
		worker.postMessage({ id: searchId, term: term, flags: flags });
	}

	function askSearch() {
		var term = window.prompt("Search frames for (a regular expression" +
					 (ignoreCase ? ", any case" : "") + "):",
					 searchTerm || "");
		if (term !== null)
			search(term);
	}

	function toggleCase() {
		ignoreCase = !ignoreCase;
		icBtn.classList.toggle("show", ignoreCase);
		setParams({ i: ignoreCase ? "1" : null });
		if (busy)
			search(pendingTerm);
		else if (searchTerm !== null)
			search(searchTerm);
	}

	function frameOf(target) {
		while (target && target !== frameGroup) {
			if (target.fgIndex !== undefined)
				return target.fgIndex;
			target = target.parentNode;
		}
		return -1;
	}

	load();

	frameGroup.addEventListener("mouseover", function (e) {
		var i = frameOf(e.target);
		if (i >= 0)
			setText(details, cfg.nametype + " " + titles[i]);
	});
	frameGroup.addEventListener("mouseout", function () {
		setText(details, " ");
	});
	frameGroup.addEventListener("click", function (e) {
		var i = frameOf(e.target);
		if (i < 0)
			return;
		if (!e.ctrlKey)
			e.preventDefault();	// a --nameattr link opens with Ctrl
		if (i === zoomed)
			return;
		zoom(i);
	});
	unzoomBtn.addEventListener("click", unzoom);
	searchBtn.addEventListener("click", function () {
		if (searchTerm !== null)
			clearSearch();
		else
			askSearch();
	});
	icBtn.addEventListener("click", toggleCase);
	window.addEventListener("keydown", function (e) {
		var k = e.key;
		if ((e.ctrlKey || e.metaKey) && (k === "f" || k === "F")) {
			e.preventDefault();
			askSearch();
		} else if ((e.ctrlKey || e.metaKey) && (k === "i" || k === "I")) {
			e.preventDefault();
			toggleCase();
		} else if (k === "Escape") {
			if (zoomed >= 0)
				unzoom();
			else if (searchTerm !== null || busy)
				clearSearch();
		}
	});

	// restore the state kept in the URL: ?x=&y= (zoom), &s= (search), &i=1
	(function () {
		var p;
		try {
			p = new URLSearchParams(location.search);
		} catch (e) {
			return;
		}
		if (p.get("i") === "1") {
			ignoreCase = true;
			icBtn.classList.add("show");
		}
		if (p.get("x") !== null && p.get("y") !== null) {
			for (var j = 0; j < groups.length; j++)
				if (xAttr[j] === p.get("x") && yAttr[j] === p.get("y")) {
					zoom(j);
					break;
				}
		}
		if (p.get("s"))
			search(p.get("s"));
	})();
})();
