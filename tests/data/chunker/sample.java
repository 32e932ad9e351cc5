package com.example.sample;

import java.util.ArrayList;
import java.util.List;

/**
 * A generic repository.
 */
@Service
public class Repository<T extends Entity> extends BaseRepository implements Store<T> {
    public static final int MAX_ITEMS = 100;

    private final List<T> items = new ArrayList<>();

    /** Creates a repository. */
    public Repository(String name) {
        super(name);
    }

    @Override
    public T find(int id) {
        return items.stream().filter(item -> item.getId() == id).findFirst().orElse(null);
    }

    public static class Builder {
        private String name;

        public Builder withName(String name) {
            this.name = name;
            return this;
        }
    }

    enum Mode { READ, WRITE }
}

interface Store<T> {
    T find(int id);
}

record Pair(int left, int right) {}

enum Level {
    LOW,
    HIGH;

    boolean isHigh() {
        return this == HIGH;
    }
}
