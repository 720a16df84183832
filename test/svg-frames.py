#!/usr/bin/env python3
"""svg-frames.py [--no-fill] FILE.svg -- list the frames a flame graph draws.

A frame is a <g> element with a <title> and a <rect> as children.  One line
per frame, sorted:  NAME TAB COUNT TAB X TAB Y TAB WIDTH TAB HEIGHT TAB FILL
where NAME and COUNT come from a title "NAME (COUNT UNIT, PCT%...)", the
geometry is rounded to one decimal and FILL is "R,G,B" ("-" with --no-fill).
Two SVGs list the same lines when they draw the same graph, whatever their
scripts, styles and attribute order.  Exit 1 if there is no frame.
"""
import re
import sys
from xml.etree import ElementTree

TITLE_RE = re.compile(r"(.*) \(([0-9][0-9.,]*) [^,()]*?, -?[0-9.]+%[^()]*\)\Z", re.S)
RGB_RE = re.compile(r"rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\Z")


def tag(el):
    return el.tag.split("}")[-1]


def colour(fill):
    m = RGB_RE.match(fill or "")
    if m:
        return ",".join(m.groups())
    if fill and re.fullmatch(r"#[0-9a-fA-F]{6}", fill):
        return ",".join(str(int(fill[i:i + 2], 16)) for i in (1, 3, 5))
    return fill or "-"


def frames(path, with_fill):
    for g in ElementTree.parse(path).getroot().iter():
        if tag(g) != "g":
            continue
        title = rect = None
        for child in g:
            if tag(child) == "title" and title is None:
                title = "".join(child.itertext())
            elif tag(child) == "rect" and rect is None:
                rect = child
        if title is None or rect is None:
            continue
        m = TITLE_RE.match(title)
        name, count = (m.group(1), m.group(2).replace(",", "")) if m else (title, "?")
        geometry = ["%.1f" % float(rect.get(k, "0")) for k in ("x", "y", "width", "height")]
        fill = colour(rect.get("fill")) if with_fill else "-"
        yield "\t".join([name, count] + geometry + [fill])


def main(args):
    with_fill = "--no-fill" not in args
    paths = [a for a in args if a != "--no-fill"]
    if len(paths) != 1:
        sys.stderr.write(__doc__)
        return 2
    lines = sorted(frames(paths[0], with_fill))
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0 if lines else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
