#include <stdlib.h>

#define QUEUE_MAX 64
#define QUEUE_FULL(q) ((q)->size >= QUEUE_MAX)

struct queue {
    int items[QUEUE_MAX];
    int size;
};

int queue_push(struct queue *q, int item) {
    if (QUEUE_FULL(q)) {
        return -1;
    }
    q->items[q->size++] = item;
    return 0;
}
