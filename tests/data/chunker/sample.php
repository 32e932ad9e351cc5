<?php
// Sample PHP file for the chunker tests.
namespace App\Models;

use App\Contracts\Store;

const MAX_ITEMS = 10;

/**
 * A repository of users.
 */
#[Entity]
class UserRepository extends BaseRepository implements Store
{
    private array $items = [];

    public function __construct(private string $name)
    {
        parent::__construct();
    }

    public function find(int $id): ?User
    {
        $match = fn($item) => $item->id === $id;
        return array_values(array_filter($this->items, $match))[0] ?? null;
    }
}

interface Store
{
    public function find(int $id): ?User;
}

trait Greets
{
    public function greet(string $name): string
    {
        return "Hello, " . $name;
    }
}

function helper(array $values): int
{
    return count($values);
}

echo helper([1, 2]);
