/*
 * word_lm_plot.c - the loss curves of the word_lm example as a
 * handwritten SVG (no plotting dependency): a plot area with a grid, the
 * loss in nats on the left axis and the same heights labelled as
 * perplexity (1, 2, 5 times powers of ten) on the right, epochs below,
 * the train curve, the validation points joined by a line, the unigram
 * baseline dashed, and a legend under the plot.
 */
#include "word_lm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wl_curve_add(curve *c, double x, double y) {
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->x = realloc(c->x, (size_t)c->cap * sizeof *c->x);
        c->y = realloc(c->y, (size_t)c->cap * sizeof *c->y);
        if (c->x == NULL || c->y == NULL)
            wl_die("out of memory%s", "");
    }
    c->x[c->n] = x;
    c->y[c->n++] = y;
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about n
 * ticks over span. */
static double nice_step(double span, int n) {
    double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void xml_escaped(FILE *f, const char *s) {
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
}

typedef struct plot {
    double x0, x1, y0, y1;           /* data ranges */
    double left, top, width, height; /* plot area in pixels */
} plot;

static double px(const plot *p, double x) {
    return p->left + (x - p->x0) / (p->x1 - p->x0) * p->width;
}

static double py(const plot *p, double y) {
    return p->top + (p->y1 - y) / (p->y1 - p->y0) * p->height;
}

static void polyline(FILE *f, const plot *p, const curve *c, const char *color, bool dots) {
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
    for (int64_t i = 0; i < c->n; i++)
        if (isfinite(c->y[i]))
            fprintf(f, "%s%.1f,%.1f", i ? " " : "", px(p, c->x[i]), py(p, c->y[i]));
    fprintf(f, "\"/>\n");
    for (int64_t i = 0; dots && i < c->n; i++)
        if (isfinite(c->y[i]))
            fprintf(f,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
                    px(p, c->x[i]),
                    py(p, c->y[i]),
                    color);
}

bool wl_write_svg(const char *path,
                  const char *title,
                  const curve *train,
                  const curve *valid,
                  double unigram_loss,
                  const char *x_label,
                  int64_t epochs) {
    FILE *f = fopen(path, "w");
    plot p = {.x0 = 0, .x1 = (double)epochs, .left = 70, .top = 40, .width = 560, .height = 330};
    double lo = unigram_loss, hi = unigram_loss;
    if (f == NULL) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    for (int k = 0; k < 2; k++) {
        const curve *c = k ? valid : train;
        for (int64_t i = 0; i < c->n; i++)
            if (isfinite(c->y[i])) {
                lo = fmin(lo, c->y[i]);
                hi = fmax(hi, c->y[i]);
            }
    }
    if (!isfinite(lo) || !isfinite(hi) || hi - lo < 1e-3) {
        lo = isfinite(lo) ? lo - 0.5 : 0;
        hi = lo + 1;
    }
    double ystep = nice_step(hi - lo, 6);
    p.y0 = floor(lo / ystep) * ystep;
    p.y1 = ceil(hi / ystep) * ystep;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"470\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"760\" height=\"470\" fill=\"white\"/>\n"
            "<text x=\"380\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">");
    xml_escaped(f, title);
    fprintf(f, "</text>\n");
    /* Grid, left ticks (loss) and right ticks (perplexity). */
    for (double y = p.y0; y <= p.y1 + 1e-9; y += ystep) {
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n",
                p.left,
                py(&p, y),
                p.left + p.width,
                py(&p, y),
                p.left - 6,
                py(&p, y) + 4,
                y);
    }
    /* Perplexity ticks at 1, 2 and 5 times powers of ten, or at finer
     * steps when the range holds fewer than three of those. */
    static const double coarse[] = {1, 2, 5}, fine[] = {1, 1.5, 2, 3, 4, 5, 7};
    const double *mult = coarse;
    int n_mult = 3;
    for (int pass = 0; pass < 2; pass++) {
        int shown = 0;
        for (int e10 = (int)floor(p.y0 / log(10)); e10 <= (int)ceil(p.y1 / log(10)); e10++)
            for (int k = 0; k < n_mult; k++) {
                double ppl = mult[k] * pow(10, e10), y = log(ppl);
                if (y < p.y0 || y > p.y1 || ppl < 1)
                    continue;
                shown++;
                if (pass == 1)
                    fprintf(f,
                            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                            "stroke=\"black\"/>\n<text x=\"%.1f\" y=\"%.1f\">%g</text>\n",
                            p.left + p.width,
                            py(&p, y),
                            p.left + p.width + 5,
                            py(&p, y),
                            p.left + p.width + 8,
                            py(&p, y) + 4,
                            ppl);
            }
        if (pass == 0 && shown < 3) {
            mult = fine;
            n_mult = 7;
        }
    }
    double xstep = nice_step((double)epochs, epochs < 10 ? (int)epochs : 10);
    if (xstep < 1)
        xstep = 1;
    for (double x = 0; x <= (double)epochs + 1e-9; x += xstep)
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                px(&p, x),
                p.top + p.height,
                px(&p, x),
                p.top + p.height + 5,
                px(&p, x),
                p.top + p.height + 18,
                x);
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"black\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n"
            "<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\">"
            "cross entropy (nats per token)</text>\n"
            "<text transform=\"translate(%.1f %.1f) rotate(90)\" text-anchor=\"middle\">"
            "perplexity</text>\n",
            p.left,
            p.top,
            p.width,
            p.height,
            p.left + p.width / 2,
            p.top + p.height + 36,
            x_label,
            p.top + p.height / 2,
            p.left + p.width + 58,
            p.top + p.height / 2);
    /* The curves, then the legend. */
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888888\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
            p.left,
            py(&p, unigram_loss),
            p.left + p.width,
            py(&p, unigram_loss));
    polyline(f, &p, train, "#1f77b4", false);
    polyline(f, &p, valid, "#ff7f0e", true);
    const char *names[3] = {"train (running)", "validation", "unigram baseline"};
    const char *colors[3] = {"#1f77b4", "#ff7f0e", "#888888"};
    /* The legend, in a row under the plot (inside it would hide a curve). */
    const double offset[3] = {0, 250, 380};
    double ly = p.top + p.height + 58;
    for (int k = 0; k < 3; k++) {
        double lx = p.left + offset[k];
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>\n<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                lx,
                ly - 4,
                lx + 28,
                ly - 4,
                colors[k],
                k == 2 ? " stroke-dasharray=\"6 4\"" : "",
                lx + 36,
                ly,
                names[k]);
    }
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    return true;
}
