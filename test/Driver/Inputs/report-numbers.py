"""Checks that the numbers of an `ffnc report` page equal `ffnc info`'s for
the same spec: per block, total parameters, weight bytes, FLOPs per token
and the arithmetic intensity at each token count. Prints one line per block
and exits 1 on the first difference.
Usage: report-numbers.py <report.html> <ffnc info output>"""
import re
import sys

html = open(sys.argv[1], encoding="utf-8").read()
info = open(sys.argv[2], encoding="utf-8").read()

pages = re.findall(r'<section class="ffn" data-name="([^"]+)">(.*?)</section>',
                   html, re.S)
blocks = re.findall(r"^ffn (\S+)  \(.*?\)\n(.*?)(?=^ffn |\Z)", info, re.S | re.M)
if len(pages) != len(blocks) or not pages:
    print("blocks: %d on the page, %d in ffnc info" % (len(pages), len(blocks)))
    sys.exit(1)
for (name, page), (info_name, text) in zip(pages, blocks):
    def cell(key):
        return re.search(r'data-key="%s">([^<]*)<' % key, page).group(1)

    def line(label):
        return re.search(r"^  %s +([0-9,]+)" % label, text, re.M).group(1)

    pairs = [("total_parameters", "total parameters"),
             ("weight_bytes", "weight bytes"),
             ("flops_per_token", "FLOPs per token")]
    got = [cell(k) for k, _ in pairs]
    want = [line(label) for _, label in pairs]
    page_i = re.findall(r'<tr data-m="(\d+)"><td>\d+</td><td '
                        r'data-key="intensity">([0-9.]+)</td>', page)
    info_i = re.findall(r"^    M = (\d+) +([0-9.]+)", text, re.M)
    if name != info_name or got != want or page_i != info_i:
        print("%s: page %s %s, ffnc info %s %s" % (name, got, page_i, want,
                                                   info_i))
        sys.exit(1)
    print("%s: equal (%s parameters, %d token counts)" % (name, got[0],
                                                          len(page_i)))
