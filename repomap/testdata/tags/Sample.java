package com.example;

import java.util.List;

public class Sample implements Runnable {
    private final List<String> names;

    public Sample(List<String> names) {
        this.names = names;
    }

    @Override
    public void run() {
        Helper h = new Helper();
        h.process(names);
    }

    interface Listener {
        void onEvent(String name);
    }

    public interface Callback {
        void done(String name);
    }

    protected int size() {
        return names.size();
    }

    enum State { ON, OFF }

    static class Helper {
        void process(List<String> items) {
            items.forEach(System.out::println);
        }
    }
}
