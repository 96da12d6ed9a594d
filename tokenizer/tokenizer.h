#ifndef EMBER_TOKENIZER_TOKENIZER_H_
#define EMBER_TOKENIZER_TOKENIZER_H_

// The whole tokenizer (@ember//tokenizer): tiktoken's encodings by name and from files,
// byte-level BPE encoding and decoding, the BPE trainer and the character tokenizer.

#include "tokenizer/char_tokenizer.h"  // IWYU pragma: export
#include "tokenizer/encoding.h"        // IWYU pragma: export
#include "tokenizer/trainer.h"         // IWYU pragma: export
#include "tokenizer/vocab.h"           // IWYU pragma: export

#endif  // EMBER_TOKENIZER_TOKENIZER_H_
