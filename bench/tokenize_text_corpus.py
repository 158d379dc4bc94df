#!/usr/bin/env python3
"""Writes the text file `coretrain bench tokenize-text` and bench/tokenize_text_vs_hf.js time: 20,000 lines (4.6 MB)
of English-like words, every fifth line with one of the golden strings (mixed scripts, emoji, control
characters) appended. Deterministic.  tokenize_text_corpus.py <repo>/tests/text/data/pipeline_golden/strings.json out.txt"""
import json
import random
import sys

random.seed(1)
golden = json.load(open(sys.argv[1]))
words = ("The quick brown fox jumps over the lazy dog while machine learning models learn representations of "
         "text from large corpora in many languages and answer questions about context passages").split()
lines = []
for i in range(20000):
    line = " ".join(random.choice(words) for _ in range(random.randint(10, 60)))
    if i % 5 == 0:
        line += " " + random.choice(golden).replace("\n", " ")
    lines.append(line)
with open(sys.argv[2], "w") as f:
    f.write("\n".join(lines) + "\n")
