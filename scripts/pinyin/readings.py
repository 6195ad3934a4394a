#!/usr/bin/env python3
"""Reads names (one a line) from the file given and prints pypinyin's toneless reading of each: syllables separated by
spaces, one line a name, ü written v. pypinyin (PyPI, MIT) segments a name by its phrase table and reads each word as
the table says: an independent implementation the product's readings are compared with (Tests/SearchEngineTests)."""
import sys

from pypinyin import Style, lazy_pinyin


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            name = line.rstrip("\n")
            print(" ".join(lazy_pinyin(name, style=Style.NORMAL, errors=lambda chars: ["-"] * len(chars))))


if __name__ == "__main__":
    main()
