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

const struct ops sample_ops = { .describe = describe };
static int hidden_table[4];
extern int shared_count;

/* A macro the parser cannot expand leaves the body unclosed. */
unsigned long total(void)
{
	int i;
	unsigned long sum = 0;

	for_each_item(i)
		sum += i;

	return sum;
}

int after_total(int x)
{
	return x + 1;
}
EXPORT_SYMBOL(after_total);
