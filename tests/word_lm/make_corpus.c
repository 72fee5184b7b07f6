/*
 * make_corpus.c - writes the small synthetic corpus the word_lm tests
 * train on: DIR/train.txt and DIR/valid.txt, one sentence per line.
 *
 *   make_corpus DIR
 *
 * Each sentence follows a fixed grammar whose choices depend on earlier
 * words: a determiner, one of 8 subjects, one of 2 verbs that belong to
 * that subject, a determiner, one of 3 objects that belong to that verb,
 * sometimes one of 2 time phrases, then ".".  Given its history, a word is
 * one of at most 8 (usually 2 or 3) choices, while its unigram frequency
 * says little: a model that learns the dependencies reaches a perplexity
 * of about 2-3, while the unigram baseline is above 20.  The text is
 * fixed (a seeded xorshift), so the tests are repeatable.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char *dets[] = {"the", "a", "every"};
static const char *nouns[8] =
    {"cat", "dog", "bird", "farmer", "child", "teacher", "horse", "robot"};
static const char *verbs[8][2] = {{"chases", "watches"},
                                  {"fetches", "buries"},
                                  {"sings", "builds"},
                                  {"plants", "harvests"},
                                  {"reads", "draws"},
                                  {"grades", "explains"},
                                  {"pulls", "jumps"},
                                  {"repairs", "computes"}};
/* Objects of verbs[i][j]: objs[2 * i + j]. */
static const char *objs[16][3] = {{"mouse", "ball", "shadow"},
                                  {"window", "fish", "moon"},
                                  {"stick", "newspaper", "frisbee"},
                                  {"bone", "toy", "sock"},
                                  {"song", "tune", "melody"},
                                  {"nest", "home", "shelter"},
                                  {"corn", "seed", "tree"},
                                  {"wheat", "apple", "crop"},
                                  {"book", "story", "letter"},
                                  {"picture", "map", "flower"},
                                  {"test", "essay", "exam"},
                                  {"lesson", "rule", "theorem"},
                                  {"cart", "plough", "wagon"},
                                  {"fence", "hedge", "gate"},
                                  {"engine", "clock", "radio"},
                                  {"sum", "orbit", "path"}};
static const char *times[2][3] = {{"in", "the", "morning"}, {"at", "night", ""}};

static uint64_t state = 0x2545F4914F6CDD1DULL;

static unsigned pick(unsigned n) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (unsigned)((state >> 33) % n);
}

static int write_sentences(const char *dir, const char *name, int n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    for (int s = 0; s < n; s++) {
        unsigned noun = pick(8), verb = pick(2);
        fprintf(f,
                "%s %s %s %s %s",
                dets[pick(3)],
                nouns[noun],
                verbs[noun][verb],
                dets[pick(2)],
                objs[2 * noun + verb][pick(3)]);
        if (pick(2)) {
            unsigned t = pick(2);
            fprintf(
                f, " %s %s%s%s", times[t][0], times[t][1], times[t][2][0] ? " " : "", times[t][2]);
        }
        fprintf(f, " .\n");
    }
    if (fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_corpus DIR\n");
        return 1;
    }
    if (write_sentences(argv[1], "train.txt", 3000) != 0)
        return 1;
    return write_sentences(argv[1], "valid.txt", 300);
}
