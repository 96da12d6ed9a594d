"""ember.tokenizer against tiktoken: the ids tiktoken gives on every test vector
(tools/reference/tiktoken_vectors.js wrote them), tiktoken's special-token contract and
errors, batches, and the GIL released while a long text encodes."""

import json
import threading
import time
import unittest

import ember
import ember.tokenizer as tiktoken

VECTORS = "tokenizer/testdata/tiktoken_vectors.jsonl"


class TiktokenVectorsTest(unittest.TestCase):
    def test_every_vector(self):
        with open(VECTORS, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        names = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
        for name in names:
            enc = tiktoken.get_encoding(name)
            for row in rows:
                text = row["text"]
                with self.subTest(name=name, text=text[:40]):
                    self.assertEqual(enc.encode_ordinary(text), row[name])
                    self.assertEqual(enc.decode(row[name]), text)
                    if name + ".all_special" in row:
                        self.assertEqual(enc.encode(text, allowed_special="all"), row[name + ".all_special"])
            batch = enc.encode_ordinary_batch([row["text"] for row in rows], num_threads=3)
            self.assertEqual(batch, [row[name] for row in rows])


class EncodingTest(unittest.TestCase):
    def setUp(self):
        self.enc = tiktoken.get_encoding("cl100k_base")

    def test_properties(self):
        enc = self.enc
        self.assertEqual(repr(enc), "<Encoding 'cl100k_base'>")
        self.assertEqual((enc.name, enc.n_vocab, enc.max_token_value, enc.eot_token), ("cl100k_base", 100277, 100276, 100257))
        self.assertEqual(enc.special_tokens_set, {"<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>"})
        self.assertIs(tiktoken.get_encoding("cl100k_base"), enc)  # loaded once
        self.assertIn("o200k_base", tiktoken.list_encoding_names())

    def test_special_tokens_as_tiktoken(self):
        enc = self.enc
        text = "a<|endoftext|>b<|fim_prefix|>"
        with self.assertRaises(ValueError) as raised:
            enc.encode(text)
        self.assertTrue(str(raised.exception).startswith(
            "Encountered text corresponding to disallowed special token '<|endoftext|>'.\n"))
        self.assertEqual(enc.encode(text, allowed_special="all"), [64, 100257, 65, 100258])
        self.assertEqual(enc.encode(text, disallowed_special=()), enc.encode_ordinary(text))
        # Allowed ones become ids, the rest are ordinary text when not disallowed...
        self.assertEqual(enc.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=()),
                         [64, 100257] + enc.encode_ordinary("b<|fim_prefix|>"))
        # ... and an error when they are (the default: every special not allowed).
        with self.assertRaisesRegex(ValueError, "'<\\|fim_prefix\\|>'"):
            enc.encode(text, allowed_special={"<|endoftext|>"})
        with self.assertRaisesRegex(ValueError, "'<\\|endoftext\\|>'"):
            enc.encode_batch(["fine", text])
        self.assertEqual(enc.encode_batch(["x", text], allowed_special="all"), [[87], [64, 100257, 65, 100258]])

    def test_decode(self):
        enc = self.enc
        ids = enc.encode("héllo 🚀")
        self.assertEqual(enc.decode(ids), "héllo 🚀")
        self.assertEqual(enc.decode_bytes(ids), "héllo 🚀".encode())
        self.assertEqual(b"".join(enc.decode_tokens_bytes(ids)), "héllo 🚀".encode())
        # A token cut inside a UTF-8 sequence: replaced, or as the caller asks.
        cut = enc.encode("🚀")[:1]
        self.assertEqual(enc.decode(cut), "\ufffd")
        self.assertEqual(enc.decode(cut, errors="ignore"), "")
        self.assertEqual(enc.decode_single_token_bytes(9906), b"Hello")

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "token id 100256 is not in cl100k_base"):
            self.enc.decode([9906, 100256])
        with self.assertRaisesRegex(ValueError, "Unknown encoding gpt3"):
            tiktoken.get_encoding("gpt3")
        with self.assertRaisesRegex(FileNotFoundError, "/nowhere/"):
            tiktoken.get_encoding("gpt2", vocab_dir="/nowhere")
        self.assertEqual(self.enc.encode("\ud800 x"), self.enc.encode("\ufffd x"))  # a lone surrogate

    def test_gil_released_while_encoding(self):
        text = "The quick brown fox jumps over the lazy dog. " * 200000  # 9 MB
        done = threading.Event()
        worker = threading.Thread(target=lambda: (self.enc.encode_ordinary(text), done.set()))
        ticks = 0
        start = time.perf_counter()
        worker.start()
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)
        worker.join()
        elapsed = time.perf_counter() - start
        # Holding the GIL for the whole encode would leave this thread no turn at all.
        self.assertGreater(ticks, 10, f"the main thread ran {ticks} times in {elapsed:.3f} s")


if __name__ == "__main__":
    unittest.main()
