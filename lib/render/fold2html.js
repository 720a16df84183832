// fold2html's page script, embedded in every page it writes (see the
// Makefile's fold2html block; this file must never hold the markup that
// would end its element).  fold2html defines fg_config and fg_data (the
// frames packed by lib/render/flamepack.h, base64) just before it.
//
// The frames are decoded once into typed arrays, in pre-order: a frame's
// descendants are the frames after it up to next[i], so a frame too narrow
// to draw skips its whole subtree, and drawing costs the frames in view,
// never the profile.  The canvas is as tall as the window and sticks to
// its top while the frames' area scrolls under it.
//
// Views: the flame graph (or, flipped, the icicle graph) of the whole
// profile, zoomed to one frame; and the sandwich of one function: all its
// callers merged above it and all its callees merged below.  The state
// lives in the URL as in fold2svg's SVG: ?s=REGEX&i=1 (search, any case),
// ?x=&y= (the zoomed frame, as fold2svg's <rect> for it, so links work
// in both), and the page's own v=icicle|flame and sandwich=FUNCTION.
"use strict";
(function () {
	var cfg = fg_config;
	var doc = document;
	var $ = function (id) { return doc.getElementById(id); };
	var canvas = $("canvas"), ctx = canvas.getContext("2d");
	var graph = $("graph"), spacer = $("spacer"), tooltip = $("tooltip");
	var details = $("details"), matchedText = $("matched"), term = $("term");
	var unzoomBtn = $("unzoom"), sandwichBtn = $("sandwich");
	var invertBtn = $("invert"), icBtn = $("ignorecase");
	var SEARCH_FILL = "rgb(230,0,230)", NEW_FILL = "rgb(190,130,240)";
	var XPAD = 10, PAD = 4;
	var fh = cfg.frameheight, charWidth = cfg.fontsize * cfg.fontwidth;
	var font = cfg.fontsize + "px \"" + cfg.fonttype.replace(/["\\]/g, "") +
		"\", Verdana, sans-serif";

	// --- counts: integers of 10^-scale units, as doubles (exact to 2^53)

	var UNIT = Math.pow(10, cfg.scale), TO_NANO = Math.pow(10, 9 - cfg.scale);
	var ONE = BigInt(1000000000);
	var FACTOR = parseCount(cfg.factor);
	var TOTAL = Number(cfg.total);

	function parseCount(s) {	// "12.5" -> 12500000000n (10^-9 units)
		var m = /^(-?)([0-9]+)(?:\.([0-9]+))?$/.exec(s), v;
		v = BigInt(m[2]) * ONE + BigInt(((m[3] || "") + "000000000").slice(0, 9));
		return m[1] ? -v : v;
	}

	// the double fold2svg's fk_count_to_double() gives for u units
	function toDouble(u) {
		var frac = u % UNIT;
		return (u - frac) / UNIT + frac * TO_NANO / 1e9;
	}

	// c * --factor, exact, as fold2svg writes it: "1,234" or "0.5"
	function countText(u) {
		var c = BigInt(u) * BigInt(TO_NANO), neg, ip, fr, s;
		if (FACTOR !== ONE) {
			var p = c * FACTOR;
			c = (p + (p < 0 ? -ONE / BigInt(2) : ONE / BigInt(2))) / ONE;
		}
		neg = c < 0;
		if (neg)
			c = -c;
		ip = (c / ONE).toString();
		fr = (c % ONE).toString();
		s = ip.replace(/\B(?=(\d{3})+$)/g, ",");
		if (fr !== "0")
			s += "." + ("000000000" + fr).slice(-9).replace(/0+$/, "");
		return (neg ? "-" : "") + s;
	}

	// 100 * part / whole to two decimals, halves to even (svg_format_pct)
	function pct(part, whole) {
		var p = BigInt(part), w = BigInt(whole), neg = p < 0, q, r;
		if (neg)
			p = -p;
		if (w <= 0)
			w = BigInt(1);
		p *= BigInt(10000);
		q = p / w;
		r = p % w;
		if (2n * r > w || (2n * r === w && q % 2n === 1n))
			q += 1n;
		var s = q.toString().padStart(3, "0");
		return (neg && q > 0 ? "-" : "") + s.slice(0, -2) + "." + s.slice(-2);
	}

	// times: a count name that is a unit of time is also shown in ms or s
	var unit = cfg.countname;
	var NS = { ns: 1, nsec: 1, nsecs: 1, nanoseconds: 1, us: 1e3, usec: 1e3,
		   usecs: 1e3, microseconds: 1e3, "\u00b5s": 1e3, "\u03bcs": 1e3, ms: 1e6,
		   msec: 1e6, msecs: 1e6, milliseconds: 1e6, s: 1e9, sec: 1e9,
		   secs: 1e9, seconds: 1e9 }[unit.toLowerCase()];
	var factorDouble = Number(FACTOR) / 1e9;

	function human(ns) {
		var a = Math.abs(ns), v, u;
		if (a >= 1e9) { v = ns / 1e9; u = " s"; }
		else if (a >= 1e6) { v = ns / 1e6; u = " ms"; }
		else if (a >= 1e3) { v = ns / 1e3; u = " \u00b5s"; }
		else { v = ns; u = " ns"; }
		return (Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3)) + u;
	}

	function amount(u) {
		var exact = countText(u) + " " + unit;
		return NS ? human(toDouble(u) * factorDouble * NS) + " (" + exact + ")" : exact;
	}

	// --- the packed frames (flamepack.h)

	var names, colors, funcOf, funcNames = [], funcRep = [], funcByName = new Map();
	var nameColor = [], nameHit = null, rootHit = false, ROOT_FUNC;
	var grey = new Uint8Array(0);

	function base64(s) {
		if (typeof Uint8Array.fromBase64 === "function")
			return Uint8Array.fromBase64(s);
		var bin = atob(s), n = bin.length, a = new Uint8Array(n);
		for (var i = 0; i < n; i++)
			a[i] = bin.charCodeAt(i);
		return a;
	}

	function Tree(n) {
		this.n = n;
		this.name = new Int32Array(n);
		this.depth = new Int32Array(n);
		this.parent = new Int32Array(n);
		this.next = new Int32Array(n);
		this.start = new Float64Array(n);
		this.width = new Float64Array(n);
		this.self = new Float64Array(n);
		this.delta = null;	// differential: the self change,
		this.total = null;	// the total change (--diff=total),
		this.isNew = null;	// absent from the first profile
		this.maxDepth = 0;
	}

	// A varint reader over the packed bytes (unsigned, then zigzag).
	function Reader(bytes) {
		this.bytes = bytes;
		this.pos = 0;
	}

	Reader.prototype.uv = function () {
		var bytes = this.bytes, b = bytes[this.pos++], v = b & 127, m = 128;
		while (b > 127) {
			b = bytes[this.pos++];
			v += (b & 127) * m;
			m *= 128;
		}
		return v;
	};

	Reader.prototype.sv = function () {
		var v = this.uv();
		return v % 2 ? -(v + 1) / 2 : v / 2;
	};

	// The frame records: depth, parent, subtree end, name, self, gap,
	// delta.  The loop is the page's hottest: a one-byte head and name
	// (the common case) are read in place.
	function readFrames(r, t) {
		var bytes = r.bytes, pos = r.pos, n = t.n, i, h, b, d, k, prev = -1;
		var name = t.name, depth = t.depth, parent = t.parent, next = t.next;
		var start = t.start, self = t.self, delta = t.delta, kind;
		var open = new Int32Array(256), maxd = 0;
		for (i = 0; i < n; i++) {
			h = bytes[pos];
			if (h > 127) {
				r.pos = pos;
				h = r.uv();
				pos = r.pos;
			} else {
				pos++;
			}
			d = prev + 1 - (h >>> 3);
			// the frames open at depth d and below end here
			for (k = d; k <= prev; k++)
				next[open[k]] = i;
			if (d + 1 >= open.length) {
				var o = new Int32Array(open.length * 2);
				o.set(open);
				open = o;
			}
			depth[i] = d;
			parent[i] = d > 0 ? open[d - 1] : -1;
			open[d] = i;
			b = bytes[pos];
			if (b > 127) {
				r.pos = pos;
				name[i] = r.uv();
				pos = r.pos;
			} else {
				name[i] = b;
				pos++;
			}
			if (h & 7) {
				r.pos = pos;
				if (h & 1)
					self[i] = r.sv();
				if (h & 2)
					start[i] = r.sv();	// the gap, until placed
				if (h & 4) {
					kind = bytes[r.pos++];
					if (kind & 1)
						delta[i] = r.sv();
					if (kind & 2)
						t.total[i] = r.sv();
					t.isNew[i] = kind >>> 2 & 1;
				}
				pos = r.pos;
			}
			if (d > maxd)
				maxd = d;
			prev = d;
		}
		for (k = 0; k <= prev; k++)
			next[open[k]] = n;
		r.pos = pos;
		t.maxDepth = maxd;
	}

	// Widths: a frame's self and its children's widths (children come
	// after their parent).  Places: after the previous sibling, or after
	// the parent's self for a first child, plus the gap.
	function placeFrames(t) {
		var n = t.n, i, d, s, parent = t.parent, width = t.width, self = t.self;
		var start = t.start, depth = t.depth, cursor = new Float64Array(t.maxDepth + 2);
		for (i = n - 1; i > 0; i--) {
			width[i] += self[i];
			width[parent[i]] += width[i];
		}
		width[0] += self[0];
		start[0] = 0;
		cursor[1] = self[0];
		for (i = 1; i < n; i++) {
			d = depth[i];
			s = cursor[d] + start[i];
			start[i] = s;
			cursor[d] = s + width[i];
			cursor[d + 1] = s + self[i];
		}
	}

	function decode() {
		var r = new Reader(base64(fg_data)), k;
		var nnames = r.uv(), n = r.uv(), nb = r.uv();
		names = new TextDecoder().decode(r.bytes.subarray(r.pos, r.pos + nb)).split("\n");
		r.pos += nb;
		colors = r.bytes.slice(r.pos, r.pos + 3 * nnames);
		r.pos += 3 * nnames;
		var t = new Tree(n);
		if (cfg.differential) {
			t.delta = new Float64Array(n);
			t.total = new Float64Array(n);
			t.isNew = new Uint8Array(n);
		}
		readFrames(r, t);
		placeFrames(t);

		// functions: names as shown, the root apart (it is "all")
		funcOf = new Int32Array(nnames);
		for (k = 0; k < nnames; k++) {
			var f = funcByName.get(names[k]);
			if (f === undefined) {
				f = funcNames.length;
				funcByName.set(names[k], f);
				funcNames.push(names[k]);
				funcRep.push(k);
			}
			funcOf[k] = f;
		}
		ROOT_FUNC = funcNames.length;
		funcNames.push("all");
		funcRep.push(t.name[0]);
		grey = new Uint8Array(nnames);
		for (k = 0; k < cfg.grey.length; k++)
			grey[cfg.grey[k]] = 1;
		fg_data = null;
		return t;
	}

	// (marks for make bench: the time to decode, then to draw)
	var T = decode();
	performance.mark("fold2html:decoded");

	function nameText(t, i) {
		return t === T && i === 0 ? "all" : names[t.name[i]];
	}

	function funcOfFrame(t, i) {
		return t === T && i === 0 ? ROOT_FUNC : funcOf[t.name[i]];
	}

	// --- colours, as fold2svg's

	function colorOf(k) {
		var c = nameColor[k];
		if (c === undefined)
			c = nameColor[k] = "rgb(" + colors[3 * k] + "," + colors[3 * k + 1] +
				"," + colors[3 * k + 2] + ")";
		return c;
	}

	function deltaColor(d) {
		var r = 255, g = 255, b = 255, m = cfg.maxdelta;
		if (cfg.negate)
			d = -d;
		if (d > 0)
			g = b = Math.trunc(210 * (m - d) / m) & 255;
		else if (d < 0)
			r = g = Math.trunc(210 * (m + d) / m) & 255;
		return "rgb(" + r + "," + g + "," + b + ")";
	}

	function isHit(t, i) {
		return nameHit !== null && (t === T && i === 0 ? rootHit : nameHit[t.name[i]] === 1);
	}

	// fold2svg's frame_color(): "--" and "-" grey, then new frames with
	// --mark-new, then the change
	function fillOf(t, i) {
		var k = t.name[i];
		if (isHit(t, i))
			return SEARCH_FILL;
		if (t.delta === null || (grey[k] && !(t === T && i === 0)))
			return colorOf(k);
		if (cfg.markNew && t.isNew[i])
			return NEW_FILL;
		return deltaColor(toDouble(cfg.diffTotal ? t.total[i] : t.delta[i]));
	}

	// --- views

	// A panel draws one tree zoomed to one frame, root down (icicle) or up.
	function Panel(tree, up) {
		this.tree = tree;
		this.up = up;
		this.zoom = 0;
		this.list = new Int32Array(64);
		this.n = 0;
		this.top = 0;
		this.height = 0;
		this.rows = 1;
		this.scale = 0;
		this.minPx = 0;
	}

	var mainPanel = new Panel(T, !cfg.inverted);
	var panels = [mainPanel], sandwichFunc = -1, lastPanel = mainPanel;
	var inner = 1, viewHeight = 0, contentHeight = 0, dpr = 1;
	var hovered = null;	// { panel, frame }

	function push(p, i) {
		if (p.n === p.list.length) {
			var l = new Int32Array(p.list.length * 2);
			l.set(p.list);
			p.list = l;
		}
		p.list[p.n++] = i;
	}

	// The frames p shows: the zoomed frame's ancestors, and its
	// descendants wide enough to draw.
	function collect(p) {
		var t = p.tree, z = p.zoom, a, i, end, wpx, maxd = t.depth[z];
		var W = t.width, next = t.next, D = t.depth;
		p.scale = W[z] > 0 ? inner / W[z] : 0;
		p.minPx = cfg.minwidthPct ? inner * cfg.minwidth / 100 : cfg.minwidth;
		p.n = 0;
		for (a = t.parent[z]; a >= 0; a = t.parent[a])
			push(p, a);
		for (i = z, end = next[z]; i < end;) {
			wpx = W[i] * p.scale;
			if (wpx < p.minPx || wpx <= 0) {
				i = next[i];
				continue;
			}
			push(p, i);
			if (D[i] > maxd)
				maxd = D[i];
			i++;
		}
		p.rows = maxd + 1;
		p.height = p.rows * fh + 2 * PAD;
	}

	function rowY(p, d) {
		return p.up ? p.top + p.height - PAD - (d + 1) * fh : p.top + PAD + d * fh;
	}

	var SANDWICH_GAP = 0;

	function layout() {
		var w = graph.clientWidth;
		place(w);
		// a scroll bar that came or went changes the width
		if (graph.clientWidth !== w)
			place(graph.clientWidth);
	}

	function place(w) {
		var y = 0, k;
		inner = Math.max(1, w - 2 * XPAD);
		SANDWICH_GAP = fh;
		for (k = 0; k < panels.length; k++) {
			collect(panels[k]);
			panels[k].top = y;
			y += panels[k].height + (k + 1 < panels.length ? SANDWICH_GAP : 0);
		}
		contentHeight = y;
		viewHeight = graph.clientHeight;
		dpr = window.devicePixelRatio || 1;
		canvas.style.width = w + "px";
		canvas.style.height = viewHeight + "px";
		canvas.width = Math.max(1, Math.round(w * dpr));
		canvas.height = Math.max(1, Math.round(viewHeight * dpr));
		spacer.style.height = Math.max(0, contentHeight - viewHeight) + "px";
	}

	function label(name, w) {
		var fit = Math.floor(w / charWidth);
		if (fit < 3)
			return "";
		if (name.length <= fit)
			return name;
		// count characters, not UTF-16 units, as fold2svg does
		var chars = Array.from(name);
		return chars.length > fit ? chars.slice(0, fit - 2).join("") + ".." : name;
	}

	function frameBox(p, i) {
		var t = p.tree, z = p.zoom;
		if (t.depth[i] < t.depth[z])
			return { x: XPAD, w: inner };
		return { x: XPAD + (t.start[i] - t.start[z]) * p.scale, w: t.width[i] * p.scale };
	}

	function drawPanel(p, scrollTop) {
		var t = p.tree, z = p.zoom, k, i, y, x, w, text, dz = t.depth[z];
		var x0 = t.start[z], list = p.list, D = t.depth, fill, last = "";
		for (k = 0; k < p.n; k++) {
			i = list[k];
			y = rowY(p, D[i]) - scrollTop;
			if (y + fh < 0 || y > viewHeight)
				continue;
			if (D[i] < dz) {
				x = XPAD;
				w = inner;
				ctx.globalAlpha = 0.5;
			} else {
				x = XPAD + (t.start[i] - x0) * p.scale;
				w = t.width[i] * p.scale;
				ctx.globalAlpha = 1;
			}
			// (setting a colour costs as much as the rect: only changes)
			fill = fillOf(t, i);
			if (fill !== last)
				ctx.fillStyle = last = fill;
			ctx.fillRect(x, y, w, fh - 1);
			text = label(nameText(t, i), w);
			if (text) {
				ctx.fillStyle = last = "#000000";
				ctx.fillText(text, x + 3, y + (fh - 1) / 2, Math.max(1, w - 4));
			}
		}
		ctx.globalAlpha = 1;
	}

	var drawPending = false, drawnScroll = -1;

	function draw() {
		drawPending = false;
		drawnScroll = graph.scrollTop;
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, canvas.width, canvas.height);
		ctx.font = font;
		ctx.textBaseline = "middle";
		var st = graph.scrollTop;
		for (var k = 0; k < panels.length; k++)
			drawPanel(panels[k], st);
		if (sandwichFunc >= 0) {	// in the gap: which half is which
			var y = panels[0].top + panels[0].height + SANDWICH_GAP / 2 - st;
			ctx.fillStyle = getComputedStyle(doc.body).color;
			ctx.fillText("\u25b2 callers of " + funcNames[sandwichFunc] +
				     "    \u25bc its callees", XPAD, y, inner);
		}
	}

	function redraw() {
		if (!drawPending) {
			drawPending = true;
			requestAnimationFrame(draw);
		}
	}

	// Lays out again and keeps the given panel's zoomed frame in view:
	// at the bottom of the window when frames grow up, else at the top.
	function relayout(p) {
		layout();
		if (p) {
			var y = rowY(p, p.tree.depth[p.zoom]);
			graph.scrollTop = p.up ? y + fh + PAD - viewHeight : y - PAD;
		}
		draw();
		updateButtons();
	}

	// --- what is under the pointer

	function frameAt(p, d, x) {
		var t = p.tree, z = p.zoom, i, c, end, pos;
		if (x < XPAD || x >= XPAD + inner || d < 0 || d >= p.rows)
			return -1;
		if (d < t.depth[z]) {
			for (i = z; i >= 0 && t.depth[i] > d; i = t.parent[i])
				;
			return i;
		}
		pos = t.start[z] + (x - XPAD) / p.scale;
		for (i = z; t.depth[i] < d; i = c) {
			for (c = i + 1, end = t.next[i]; c < end; c = t.next[c])
				if (t.start[c] <= pos && pos < t.start[c] + t.width[c])
					break;
			if (c >= end)
				return -1;
		}
		var wpx = t.width[i] * p.scale;
		return wpx < p.minPx || wpx <= 0 ? -1 : i;
	}

	function hitTest(cx, cy) {
		var y = cy + graph.scrollTop;
		for (var k = 0; k < panels.length; k++) {
			var p = panels[k], d;
			if (y < p.top || y >= p.top + p.height)
				continue;
			d = p.up ? Math.floor((p.top + p.height - PAD - y) / fh)
				 : Math.floor((y - p.top - PAD) / fh);
			var i = frameAt(p, d, cx);
			return i < 0 ? null : { panel: p, frame: i };
		}
		return null;
	}

	// fold2svg's title for a frame: "NAME (COUNT COUNTNAME, P%[; +D%])"
	function titleOf(t, i) {
		var s = nameText(t, i) + " (" + countText(t.width[i]) + " " + unit + ", ";
		if (t === T && i === 0 && !cfg.differential)
			return s + "100%)";
		s += pct(t.width[i], TOTAL) + "%";
		if (t.delta !== null)
			s += "; " + changeText(t, i).join("; ");
		return s + ")";
	}

	// fold2svg's change: "+S%", or "+T% total", "+S% self"; then "new"
	// ("gone" with --negate, whose second profile is the older)
	function changeText(t, i) {
		var pc = function (d) {
			d = cfg.negate ? -d : d;
			return (d > 0 ? "+" : "") + pct(d, TOTAL) + "%";
		};
		var out = cfg.diffTotal ? [pc(t.total[i]) + " total", pc(t.delta[i]) + " self"]
			: [pc(t.delta[i])];
		if (cfg.markNew && t.isNew[i])
			out.push(cfg.negate ? "gone" : "new");
		return out;
	}

	function tooltipText(p, i) {
		var t = p.tree, z = p.zoom, lines = [nameText(t, i)];
		lines.push(amount(t.width[i]) + ", " + pct(t.width[i], TOTAL) + "% of all");
		if (z !== 0 && z !== i && t.depth[i] > t.depth[z])
			lines.push(pct(t.width[i], t.width[z]) + "% of " + nameText(t, z));
		if (p !== mainPanel && i !== 0)
			lines.push(pct(t.width[i], t.width[0]) + "% of " + nameText(t, 0) + "'s");
		if (t.self[i] > 0 && t.self[i] !== t.width[i])
			lines.push("self: " + amount(t.self[i]) + ", " + pct(t.self[i], TOTAL) + "%");
		if (t.delta !== null)
			lines.push("change: " + changeText(t, i).join(", ") + " (of all)");
		return lines.join("\n");
	}

	function setText(el, s) {
		if (el.textContent !== s)
			el.textContent = s;
	}

	function showHover(h, cx, cy) {
		hovered = h;
		if (!h) {
			tooltip.hidden = true;
			setText(details, " ");
			canvas.title = "";
			return;
		}
		setText(details, cfg.nametype + " " + titleOf(h.panel.tree, h.frame));
		setText(tooltip, tooltipText(h.panel, h.frame));
		tooltip.hidden = false;
		var r = tooltip.getBoundingClientRect();
		var x = Math.min(cx + 14, window.innerWidth - r.width - 4);
		var y = cy + 18 + r.height > window.innerHeight ? cy - r.height - 8 : cy + 18;
		tooltip.style.left = Math.max(0, x) + "px";
		tooltip.style.top = Math.max(0, y) + "px";
	}

	// --- the URL

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

	// printf("%.1f", v): toFixed() but for exact halves, which go to even
	function tenths(v) {
		var q = v * 4;
		if (Number.isInteger(q) && q % 2 !== 0) {
			var t = Math.floor(v * 10);
			if (t % 2 !== 0)
				t++;
			return Math.floor(t / 10) + "." + (t % 10);
		}
		return v.toFixed(1);
	}

	// Perl's number printing, as fold2svg's y: integers plain, else %.15g
	function perlNum(v) {
		if (Number.isInteger(v) && Math.abs(v) < 1e15)
			return String(v);
		var s = v.toPrecision(15);
		return s.indexOf("e") >= 0 ? s : s.replace(/\.?0+$/, "");
	}

	// where fold2svg draws frame i of the profile: its <rect>'s x and y
	function svgX(i) {
		return tenths(10 + toDouble(T.start[i]) * cfg.svg.wpt);
	}

	function svgY(d) {
		return perlNum(cfg.inverted ? cfg.svg.yBase + d * fh : cfg.svg.yBase - d * fh - fh + 1);
	}

	function svgDrawn(i) {
		return !(toDouble(T.width[i]) < cfg.svg.minCount);
	}

	// The frames at depth d where fold2svg would put x; the one its link
	// means is the first it draws.
	function framesAt(d, x) {
		var out = [];
		for (var i = 0; i < T.n; i++)
			if (T.depth[i] === d && svgX(i) === x)
				out.push(i);
		return out;
	}

	function zoomParams(z) {
		if (z === 0)
			return { x: null, y: null, n: null };
		var d = T.depth[z], x = svgX(z), same = framesAt(d, x), first = -1;
		for (var k = 0; k < same.length && first < 0; k++)
			if (svgDrawn(same[k]))
				first = same[k];
		return { x: x, y: svgY(d), n: first === z ? null : String(same.indexOf(z)) };
	}

	function frameOfParams(x, y, n) {
		var guess = Math.round(cfg.inverted ? (Number(y) - cfg.svg.yBase) / fh
					 : (cfg.svg.yBase - fh + 1 - Number(y)) / fh);
		for (var d = guess - 1; d <= guess + 1; d++) {
			if (d < 0 || d > T.maxDepth || svgY(d) !== y)
				continue;
			var same = framesAt(d, x), k;
			if (n !== null && /^[0-9]+$/.test(n))
				return Number(n) < same.length ? same[Number(n)] : -1;
			for (k = 0; k < same.length; k++)
				if (svgDrawn(same[k]))
					return same[k];
		}
		return -1;
	}

	// --- zoom, views

	function zoom(p, i) {
		if (i < 0 || i === p.zoom)
			return;
		p.zoom = i;
		lastPanel = p;
		if (p === mainPanel)
			setParams(zoomParams(i));
		relayout(p);
		updateMatched();
	}

	function unzoom() {
		var changed = false;
		for (var k = 0; k < panels.length; k++)
			if (panels[k].zoom !== 0) {
				panels[k].zoom = 0;
				changed = true;
			}
		if (!changed)
			return false;
		setParams(zoomParams(0));
		relayout(panels[0].up ? panels[panels.length - 1] : panels[0]);
		updateMatched();
		return true;
	}

	function zoomOut() {
		var p = lastPanel, t = p.tree;
		if (p.zoom !== 0)
			zoom(p, t.parent[p.zoom]);
	}

	function setInverted(inv) {
		mainPanel.up = !inv;
		invertBtn.textContent = inv ? "Flame" : "Icicle";
		invertBtn.classList.toggle("on", inv);
		setParams({ v: inv === cfg.inverted ? null : inv ? "icicle" : "flame" });
		if (sandwichFunc < 0)
			relayout(mainPanel);
	}

	function updateButtons() {
		var zoomed = panels.some(function (p) { return p.zoom !== 0; });
		unzoomBtn.disabled = !zoomed;
		if (sandwichFunc >= 0) {
			sandwichBtn.disabled = false;
			sandwichBtn.textContent = "Flame Graph";
			sandwichBtn.classList.add("on");
		} else {
			sandwichBtn.disabled = mainPanel.zoom === 0;
			sandwichBtn.textContent = "Sandwich";
			sandwichBtn.classList.remove("on");
		}
	}

	// A merged tree (the sandwich's callers or callees) being built: nodes
	// keyed by (parent node, function).
	function Builder(rootFunc) {
		this.parent = [-1];
		this.func = [rootFunc];
		this.width = [0];
		this.kids = new Map();
	}

	Builder.prototype.child = function (node, f) {
		var key = node * funcNames.length + f, c = this.kids.get(key);
		if (c === undefined) {
			c = this.func.length;
			this.kids.set(key, c);
			this.parent.push(node);
			this.func.push(f);
			this.width.push(0);
		}
		return c;
	};

	// In pre-order, children in name order, each after its parent's self.
	Builder.prototype.tree = function () {
		var m = this.func.length, children = [], k, t = new Tree(m);
		var func = this.func, width = this.width;
		for (k = 0; k < m; k++)
			children.push(null);
		for (k = 1; k < m; k++) {
			var p = this.parent[k];
			(children[p] || (children[p] = [])).push(k);
		}
		var byName = function (a, b) {
			var x = funcNames[func[a]], y = funcNames[func[b]];
			return x < y ? -1 : x > y ? 1 : a - b;
		};
		var stack = [0], startOf = new Float64Array(m), depthOf = new Int32Array(m);
		var parentIdx = new Int32Array(m), at = new Int32Array(m), n = 0;
		parentIdx[0] = -1;
		while (stack.length) {
			var node = stack.pop(), i = n++, kids = children[node];
			at[node] = i;
			t.name[i] = funcRep[func[node]];
			t.depth[i] = depthOf[node];
			t.parent[i] = node === 0 ? -1 : at[this.parent[node]];
			t.start[i] = startOf[node];
			t.width[i] = width[node];
			var childSum = 0, j;
			if (kids) {
				kids.sort(byName);
				for (j = 0; j < kids.length; j++)
					childSum += width[kids[j]];
			}
			t.self[i] = width[node] - childSum;
			if (t.depth[i] > t.maxDepth)
				t.maxDepth = t.depth[i];
			if (kids) {
				var s = startOf[node] + t.self[i];
				for (j = 0; j < kids.length; j++) {
					startOf[kids[j]] = s;
					depthOf[kids[j]] = depthOf[node] + 1;
					s += width[kids[j]];
				}
				for (j = kids.length - 1; j >= 0; j--)
					stack.push(kids[j]);
			}
		}
		// subtree ends, from the end
		for (k = m - 1; k >= 0; k--)
			t.next[k] = k + 1;
		for (k = m - 1; k > 0; k--)
			if (t.next[k] > t.next[t.parent[k]])
				t.next[t.parent[k]] = t.next[k];
		return t;
	};

	// The outermost frames of function f: a frame inside another of f
	// (recursion) is already in it.
	function occurrences(f) {
		var out = [], i = 0;
		while (i < T.n) {
			if (funcOfFrame(T, i) === f) {
				out.push(i);
				i = T.next[i];
			} else {
				i++;
			}
		}
		return out;
	}

	function buildSandwich(f) {
		var occ = occurrences(f), callers = new Builder(f), callees = new Builder(f);
		var map = new Int32Array(T.n), k, o, a, j, node, w;
		for (k = 0; k < occ.length; k++) {
			o = occ[k];
			w = T.width[o];
			callers.width[0] += w;
			callees.width[0] += w;
			// the chain of callers, up to (not with) the root "all"
			for (node = 0, a = T.parent[o]; a > 0; a = T.parent[a]) {
				node = callers.child(node, funcOfFrame(T, a));
				callers.width[node] += w;
			}
			// everything called from it, merged by function
			map[o] = 0;
			for (j = o + 1; j < T.next[o]; j++) {
				node = map[j] = callees.child(map[T.parent[j]], funcOfFrame(T, j));
				callees.width[node] += T.width[j];
			}
		}
		return { callers: callers.tree(), callees: callees.tree() };
	}

	function openSandwich(f) {
		if (f < 0 || f === ROOT_FUNC)
			return;
		var s = buildSandwich(f);
		sandwichFunc = f;
		panels = [new Panel(s.callers, true), new Panel(s.callees, false)];
		lastPanel = panels[0];
		setParams({ sandwich: funcNames[f] });
		hovered = null;
		relayout(panels[0]);
		updateMatched();
	}

	function closeSandwich() {
		if (sandwichFunc < 0)
			return;
		sandwichFunc = -1;
		panels = [mainPanel];
		lastPanel = mainPanel;
		setParams({ sandwich: null });
		hovered = null;
		relayout(mainPanel);
		updateMatched();
	}

	// --- search
	//
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
	var searchTerm = null, ignoreCase = false;

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
		nameHit = null;
		rootHit = false;
		searchTerm = null;
		setText(matchedText, " ");
		setParams({ s: null });
		redraw();
	}

	// The samples in frames i <= j < end that match, each once: a match
	// inside a matching frame is already counted in it.
	function matchedIn(t, i, end) {
		var sum = 0;
		while (i < end) {
			if (isHit(t, i)) {
				sum += t.width[i];
				i = t.next[i];
			} else {
				i++;
			}
		}
		return sum;
	}

	function updateMatched() {
		if (nameHit === null)
			return;
		var sum = matchedIn(T, 0, T.n), z = mainPanel.zoom;
		var s = "Matched: " + pct(sum, TOTAL) + "% (" + amount(sum) + ")";
		if (sandwichFunc < 0 && z !== 0) {
			var inZoom = 0, a;
			for (a = z; a >= 0 && !inZoom; a = T.parent[a])
				if (isHit(T, a))
					inZoom = T.width[z];
			if (!inZoom)
				inZoom = matchedIn(T, z, T.next[z]);
			s += "; " + pct(inZoom, T.width[z]) + "% of the zoomed frame";
		}
		setText(matchedText, s);
	}

	function showHits(term, hit) {
		var k;
		nameHit = new Uint8Array(funcOf.length);
		for (k = 0; k < funcOf.length; k++)
			nameHit[k] = hit[funcOf[k]];
		rootHit = hit[ROOT_FUNC] === 1;
		searchTerm = term;
		setParams({ s: term });
		updateMatched();
		redraw();
	}

	function searchStopped() {
		clearSearch();
		setText(matchedText, "Search stopped after " + SEARCH_MS / 1000 +
			" s: the regex is too slow");
	}

	function startWorker() {
		try {
			worker = new Worker(URL.createObjectURL(
				new Blob([WORKER_SRC], { type: "text/javascript" })));
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
			var t = pendingTerm, was = busy;
			e.preventDefault();
			cancelSearch();
			if (worker)
				worker.terminate();
			worker = null;
			if (!workerRan) {	// it never loaded: match here instead
				noWorker = true;
				if (was)
					search(t);
			} else {
				setText(matchedText, "Invalid regex");
			}
		};
		worker.postMessage({ names: funcNames });
	}

	function searchHere(t, re) {
		var n = funcNames.length, hit = new Uint8Array(n), t0 = Date.now();
		try {
			for (var j = 0; j < n; j++) {
				hit[j] = re.test(funcNames[j]) ? 1 : 0;
				if ((j & 255) === 255 && Date.now() - t0 > SEARCH_MS)
					return searchStopped();
			}
		} catch (e) {	// a regex too complex for the engine
			setText(matchedText, "Invalid regex");
			return;
		}
		showHits(t, hit);
	}

	function search(t) {
		var flags = ignoreCase ? "i" : "", re;
		if (!t)
			return clearSearch();
		try {
			re = new RegExp(t, flags);	// compiling is quick and safe
		} catch (e) {
			cancelSearch();
			setText(matchedText, "Invalid regex");
			return;
		}
		cancelSearch();
		if (!worker && !noWorker)
			startWorker();
		if (!worker)
			return searchHere(t, re);
		pendingTerm = t;
		busy = true;
		setText(matchedText, "Searching\u2026");
		worker.postMessage({ id: searchId, term: t, flags: flags });
	}

	function toggleCase() {
		ignoreCase = !ignoreCase;
		icBtn.classList.toggle("on", ignoreCase);
		setParams({ i: ignoreCase ? "1" : null });
		if (busy)
			search(pendingTerm);
		else if (searchTerm !== null)
			search(searchTerm);
	}

	// --- events

	function canvasPoint(e) {
		var r = canvas.getBoundingClientRect();
		return { x: e.clientX - r.left, y: e.clientY - r.top };
	}

	canvas.addEventListener("mousemove", function (e) {
		var pt = canvasPoint(e);
		showHover(hitTest(pt.x, pt.y), e.clientX, e.clientY);
	});
	canvas.addEventListener("mouseleave", function () {
		showHover(null);
	});
	canvas.addEventListener("click", function (e) {
		var pt = canvasPoint(e), h = hitTest(pt.x, pt.y);
		if (!h)
			return;
		if (e.shiftKey)
			openSandwich(funcOfFrame(h.panel.tree, h.frame));
		else
			zoom(h.panel, h.frame);
		var again = hitTest(pt.x, pt.y);
		showHover(again, e.clientX, e.clientY);
	});
	graph.addEventListener("scroll", function () {
		tooltip.hidden = true;
		if (graph.scrollTop !== drawnScroll)	// not relayout()'s own
			redraw();
	});
	window.addEventListener("resize", function () {
		layout();
		draw();
	});
	unzoomBtn.addEventListener("click", unzoom);
	invertBtn.addEventListener("click", function () {
		setInverted(mainPanel.up);
	});
	sandwichBtn.addEventListener("click", function () {
		if (sandwichFunc >= 0)
			closeSandwich();
		else if (mainPanel.zoom !== 0)
			openSandwich(funcOfFrame(T, mainPanel.zoom));
	});
	icBtn.addEventListener("click", toggleCase);
	var typing = null;
	term.addEventListener("input", function () {
		if (typing !== null)
			clearTimeout(typing);
		typing = setTimeout(function () {
			typing = null;
			search(term.value);
		}, 150);
	});
	term.addEventListener("keydown", function (e) {
		if (e.key === "Enter") {
			if (typing !== null)
				clearTimeout(typing);
			typing = null;
			search(term.value);
		} else if (e.key === "Escape") {
			term.value = "";
			clearSearch();
			term.blur();
			e.stopPropagation();
		}
	});
	window.addEventListener("keydown", function (e) {
		var k = e.key, mod = e.ctrlKey || e.metaKey, inInput = e.target === term;
		if (mod && (k === "f" || k === "F")) {
			e.preventDefault();
			term.focus();
			term.select();
		} else if (mod && (k === "i" || k === "I")) {
			e.preventDefault();
			toggleCase();
		} else if (inInput || mod || e.altKey) {
			return;
		} else if (k === "/") {
			e.preventDefault();
			term.focus();
		} else if (k === "Escape") {
			if (!unzoom()) {
				if (sandwichFunc >= 0)
					closeSandwich();
				else if (searchTerm !== null || busy) {
					term.value = "";
					clearSearch();
				}
			}
		} else if (k === "Backspace") {
			e.preventDefault();
			zoomOut();
		} else if (k === "Enter" && hovered) {
			zoom(hovered.panel, hovered.frame);
		} else if (k === "i") {
			setInverted(mainPanel.up);
		} else if (k === "s" && (hovered || mainPanel.zoom !== 0)) {
			if (hovered)
				openSandwich(funcOfFrame(hovered.panel.tree, hovered.frame));
			else
				openSandwich(funcOfFrame(T, mainPanel.zoom));
		}
	});

	// --- start: the state kept in the URL, then the first drawing

	doc.body.style.fontFamily = font.slice(font.indexOf(" ") + 1);
	(function () {
		var p;
		try {
			p = new URLSearchParams(location.search);
		} catch (e) {
			p = new URLSearchParams("");
		}
		if (p.get("v") === "icicle" || p.get("v") === "flame") {
			mainPanel.up = p.get("v") === "flame";
			invertBtn.textContent = mainPanel.up ? "Icicle" : "Flame";
			invertBtn.classList.toggle("on", !mainPanel.up);
		} else {
			invertBtn.textContent = cfg.inverted ? "Flame" : "Icicle";
			invertBtn.classList.toggle("on", cfg.inverted);
		}
		if (p.get("x") !== null && p.get("y") !== null) {
			var z = frameOfParams(p.get("x"), p.get("y"), p.get("n"));
			if (z > 0)
				mainPanel.zoom = z;
		}
		if (p.get("i") === "1") {
			ignoreCase = true;
			icBtn.classList.add("on");
		}
		relayout(mainPanel);
		var f = p.get("sandwich");
		if (f !== null && funcByName.has(f))
			openSandwich(funcByName.get(f));
		if (p.get("s")) {
			term.value = p.get("s");
			search(p.get("s"));
		}
		performance.mark("fold2html:drawn");
		doc.documentElement.setAttribute("data-ready", "1");
	})();
})();
