import React from "react";

interface Props {
  title: string;
}

export function Header({ title }: Props) {
  return <h1>{format(title)}</h1>;
}

export const App = () => (
  <div>
    <Header title="hi" />
  </div>
);

class Panel extends React.Component<Props> {
  render() {
    return <Header title={this.props.title} />;
  }
}

function format(s: string): string {
  return s.toUpperCase();
}
