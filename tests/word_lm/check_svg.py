"""Checks the plot word_lm (and gpt2, which shares its code) writes: a
well-formed SVG document with axes (tick labels, the x axis labelled
X_LABEL, "epoch" by default), a train and a validation line with points,
and the legend.

    python3 check_svg.py FILE.svg [X_LABEL]
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main(path, x_label):
    root = ET.parse(path).getroot()
    assert root.tag == NS + "svg", f"{path}: root element is {root.tag}, not svg"
    lines = root.findall(NS + "polyline")
    assert len(lines) == 2, f"{path}: {len(lines)} polylines, expected train and validation"
    for line in lines:
        points = line.get("points", "").split()
        assert len(points) >= 2, f"{path}: a curve has {len(points)} points"
        for p in points:
            x, y = (float(v) for v in p.split(","))
            assert 0 <= x <= 760 and 0 <= y <= 470, f"{path}: point {p} outside the picture"
    texts = [t.text or "" for t in root.iter(NS + "text")]
    for label in (x_label, "perplexity", "validation", "unigram baseline"):
        assert any(label in t for t in texts), f"{path}: no text '{label}'"
    numbers = [t for t in texts if t.replace(".", "", 1).isdigit()]
    assert len(numbers) >= 6, f"{path}: only {len(numbers)} numeric tick labels"
    print(f"{path}: ok ({len(texts)} labels)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "epoch")
