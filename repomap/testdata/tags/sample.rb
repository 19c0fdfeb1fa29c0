require "json"

module Billing # :nodoc:
  RATE = 0.2

  class Invoice < Base
    def initialize(items)
      @items = items
    end

    def total
      @items.sum { |i| i.price } * (1 + RATE)
    end

    def self.load(path)
      new(JSON.parse(File.read(path)))
    end

    attr_reader :items, :currency

    private def rounding
      2
    end

    def tax # :nodoc:
      RATE
    end

    def lines
      @items
    end
    private :lines

    protected

    def peer_total(other)
      other.total
    end

    private

    def cache_key
      "invoice"
    end
  end

  class Ledger # :nodoc:
    def post(entry)
      entry
    end
  end
end

def format_total(invoice)
  invoice.total.round(2)
end
