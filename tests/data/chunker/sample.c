/* Sample C file for the chunker tests. */
#include <stdio.h>
#include <stdlib.h>

#define MAX_ITEMS 16
#define SQUARE(x) ((x) * (x))

/* A 2D point. */
struct point {
    int x;
    int y;
};

typedef struct node {
    int value;
    struct node *next;
} node_t;

enum color { RED, GREEN, BLUE };

static const int limit = 10;

/**
 * Sums a list.
 */
int sum_list(const node_t *head) {
    int total = 0;
    for (const node_t *n = head; n != NULL; n = n->next) {
        total += n->value;
    }
    return total;
}

static void print_point(struct point p) {
    printf("(%d, %d)\n", p.x, SQUARE(p.y));
}

int main(int argc, char **argv) {
    node_t *head = malloc(sizeof(node_t));
    head->value = argc;
    head->next = NULL;
    print_point((struct point){1, 2});
    return sum_list(head);
}
