#include <stdio.h>

#define MAX_ITEMS 16
#define SQUARE(x) ((x) * (x))

struct point {
    int x, y;
};

typedef struct point point_t;

enum color { RED, GREEN };

static int count_items(const point_t *items, int n);

char *describe(point_t p) {
    static char buf[64];
    snprintf(buf, sizeof buf, "%d,%d", p.x, p.y);
    return buf;
}

static int count_items(const point_t *items, int n) {
    return n > MAX_ITEMS ? MAX_ITEMS : SQUARE(n);
}

int main(void) {
    point_t p = {1, 2};
    puts(describe(p));
    return count_items(&p, 1);
}
