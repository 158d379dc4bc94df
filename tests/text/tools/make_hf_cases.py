import json, random
random.seed(11)
pool = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + \
  list(",.!?;:'\"()[]{}#$%&*+-/<=>@\\^_`|~") + \
  ["é","É","ñ","Ñ","ü","e\u0301","a\u0308","ệ","ǅ","İ","I","ı","Σ","ς","ß","ẞ","ﬁ","Å","\u212b","ά","\u0345","α\u0345\u0313","\U0001d165",
   "中","文","北","\uf900","\u2f800","\U00020000","\U0002b820","\U0002b920","한","국","カ","タ","ㄱ",
   "\u200b","\u00ad","\ufeff","\u00a0","\u000b","\u000c","\u0085","\u2028","\u3000","\u202f","\u180e","\u0001","\u007f","\ue000","\ufffd",
   "\t","\n","\r"," "," "," ","“","”","—","¿","«","»","€","©","°","…","・","。","😀","\U0001fae0","\u0378","\u2e43","\u2e52","\u08d4","\u1abf","\U000110cd","\U00013430","\u0890","\U0001e944","\U0001173c","\u08e3",
   "[SEP]","[MASK]","[UNK]","[sep]","##"]
words = ["hello","world","cafe","café","istanbul","résumé","naïve","unaffable","the","of","and","Zürich","İstanbul","ΣΊΣΥΦΟΣ","straße","ﬁne"]
strings = ["Hello, World!", "Café Ñandú", "Cafe\u0301", " \u0301 ", "CAFÉ", "İstanbul", "中文abc", "カタカナ", "\uf900", "한국어",
  "“Hello”—world ¿que «5€»", "hel\u200blo", "a\u000bb", "a\u0085b", "Hello [SEP] world[MASK][MASK]", "[sep]", "[SE",
  "  The “Café” in Zürich\topened in 1905.\n北京 is BIG! Résumé naïve ... x", "a"*100, "a"*101, "é"*100, "é"*101,
  "ΣΊΣΥΦΟΣ ς", "straße STRASSE ẞ", "ﬁne ǅ", "α\u0345\u0313 \U0001d165\u0301x x\U0001d16d\U0001d165"]
for n in range(400):
  k = random.randint(1, 12)
  parts = []
  for _ in range(k):
    r = random.random()
    if r < 0.35: parts.append(random.choice(words))
    elif r < 0.6: parts.append("".join(random.choice(pool) for _ in range(random.randint(1,6))))
    else: parts.append(random.choice(pool))
    parts.append(random.choice([" ", " ", "", "\n"]))
  strings.append("".join(parts))
vocab = ["[PAD]","[UNK]","[CLS]","[SEP]","[MASK]"]
seen = set(vocab)
def add(t):
  if t not in seen: seen.add(t); vocab.append(t)
for c in pool:
  for f in [c, c.lower()]:
    if len(f) == 1:
      add(f); add("##"+f)
for w in words + ["hel","##lo","##llo","un","##aff","##able","i\u0307","##\u0307","##stanbul","resume","re","##sume","naive","cafe","zurich","σισυφος","σίσυφος","strasse","##ss","fi","##ne","ǆ","\u0313","##\u0313","\u0345","##\u0345","ἀ","ι","##ι","s","##s","ά","α"]:
  add(w)
# Input for make_hf_golden.js: a small vocab and strings that stress every BertNormalizer / pre-tokenizer rule.
json.dump({"strings": strings, "vocab": vocab}, open("cases.json", "w"), ensure_ascii=True)
print(len(strings), len(vocab))
