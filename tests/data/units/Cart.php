<?php

namespace Shop;

trait Greets
{
    public function greet(string $name): string
    {
        return "Hello, " . $name;
    }
}

class Cart
{
    use Greets;

    private array $items = [];

    public function add(string $sku): void
    {
        $this->items[] = $sku;
    }

    public function count(): int
    {
        return count($this->items);
    }
}
