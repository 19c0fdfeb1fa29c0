<?php

namespace App\Models;

const VERSION = "1.0";

interface Repository
{
    public function find(int $id): ?User;
}

trait Timestamps
{
    public function touch(): void
    {
        $this->updated = time();
    }
}

class User extends Model implements Repository
{
    use Timestamps;

    public function find(int $id): ?User
    {
        return new User();
    }
}

function helper(User $u): string
{
    return strtoupper($u->find(1)->name);
}
